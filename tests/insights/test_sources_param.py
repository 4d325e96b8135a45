"""`sources` may be one plain string: `papermill -p sources PATH` passes a str, not a list."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.insights.sources import as_source_list, load_sources

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "01_failure_clusters.ipynb"
TAU = Path(__file__).parent / "fixtures" / "tau_bench_airline_small.json"


def test_a_plain_string_is_one_source_not_its_characters() -> None:
    assert as_source_list(str(TAU)) == [str(TAU)]
    assert as_source_list(TAU) == [str(TAU)]
    assert as_source_list([TAU, "synthetic:10"]) == [str(TAU), "synthetic:10"]
    assert as_source_list([]) == []
    as_list = load_sources([str(TAU)])
    for one in (str(TAU), TAU):
        loaded = load_sources(one)
        assert [r.record_id for r in loaded.records] == [r.record_id for r in as_list.records]
        assert [s["source"] for s in loaded.sources] == [str(TAU)]


@pytest.mark.notebook
def test_notebook_takes_a_string_sources_parameter(tmp_path: Path) -> None:
    import papermill as pm

    out = tmp_path / "01.ipynb"
    pm.execute_notebook(
        str(NOTEBOOK),
        str(out),
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
        parameters={"sources": str(TAU), "out_dir": str(tmp_path / "out")},
    )
    assert (tmp_path / "out" / "insights.json").is_file()
    assert "Traceback" not in out.read_text()
