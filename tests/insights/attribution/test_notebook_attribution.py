"""Notebook 01 as the researcher's bench: attributed steps in the raw trace, the agreement
table where annotations exist, the loop/stall/limit timeline; held-out runs in no figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.insights.attribution.test_mechanisms import _annotated
from tests.insights.attribution.traces import write_runs

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "01_failure_clusters.ipynb"


def _html(tmp_path: Path, sources: list[str]) -> tuple[str, object]:
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    out = tmp_path / "01.ipynb"
    pm.execute_notebook(
        str(NOTEBOOK),
        str(out),
        kernel_name="python3",
        cwd=str(NOTEBOOK.parents[1]),
        progress_bar=False,
        parameters={"sources": sources, "out_dir": str(tmp_path / "out")},
    )
    node = nbformat.read(out, as_version=4)
    html, _ = HTMLExporter().from_notebook_node(node)
    return html, node


@pytest.mark.notebook
def test_notebook_shows_attribution_agreement_and_timeline(tmp_path) -> None:
    folder = write_runs(tmp_path / "runs", _annotated(0))
    html, node = _html(tmp_path, [str(folder)])
    outputs = [o for c in node.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]  # (the traces hold tracebacks)
    assert "WebSurfer takes a step that makes no progress" in html  # a mechanism title
    assert "▶" in html  # the attributed step marked in the raw trace
    assert "annotated agent" in html and "attributed agent" in html  # the confusion table
    assert "agent_accuracy" in html
    assert html.count("image/png") >= 1  # the timeline renders inline
    # each exemplar's ranked candidates and the clusters' low-confidence counts (issue 39)
    assert "low_confidence" in html and "p=0." in html and "probability" in html
