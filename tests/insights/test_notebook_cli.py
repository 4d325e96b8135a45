from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.cli.app import main

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "01_failure_clusters.ipynb"
FIXTURES = Path(__file__).parent / "fixtures"


def test_cluster_cli_writes_insights_json(tmp_path, capsys) -> None:
    code = main(
        [
            "cluster",
            "synthetic:400:3",
            str(FIXTURES / "tau_bench_airline_small.json"),
            str(FIXTURES / "who_and_when_small.json"),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    data = json.loads((tmp_path / "insights.json").read_text())
    assert data["insights"] and data["routing"] and data["research_candidates"]
    assert len(data["routing"]) == len(data["insights"])
    # the failed tau-bench run without ground truth and the partially annotated Who&When runs
    # are analysed, not quarantined
    assert data["quarantined"] == 4
    assert "research candidates" in capsys.readouterr().out


def test_cluster_cli_refuses_a_lowered_knob(tmp_path) -> None:
    assert main(["cluster", "synthetic:50", "--out", str(tmp_path), "--min-cluster-size", "3"]) == 2


@pytest.mark.notebook
def test_notebook_runs_under_papermill(tmp_path) -> None:
    import papermill as pm

    out = tmp_path / "01.ipynb"
    pm.execute_notebook(
        str(NOTEBOOK),
        str(out),
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
        parameters={
            "sources": ["synthetic:300:5", str(FIXTURES / "tau_bench_airline_small.json")],
            "out_dir": str(tmp_path / "out"),
        },
    )
    assert (tmp_path / "out" / "insights.json").is_file()
    text = out.read_text()
    assert "ResearchTask candidates" in text and "Traceback" not in text


@pytest.mark.notebook
def test_notebook_validates_under_nbval(tmp_path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval-lax",
            "-p",
            "no:cacheprovider",
            str(NOTEBOOK),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


def _render_html(tmp_path: Path, sources: list[str]) -> str:
    """Execute notebook 01 under papermill and render it to HTML as a reader would see it."""
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    out = tmp_path / "01.ipynb"
    pm.execute_notebook(
        str(NOTEBOOK),
        str(out),
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
        parameters={"sources": sources, "out_dir": str(tmp_path / "out")},
    )
    html, _ = HTMLExporter().from_notebook_node(nbformat.read(out, as_version=4))
    return html


@pytest.mark.notebook
def test_notebook_html_shows_figures_and_raw_trace_excerpts(tmp_path) -> None:
    html = _render_html(tmp_path, [str(FIXTURES / "tau_bench_airline_small.json")])
    assert "<img" in html and "image/png" in html  # figures render inline (no Agg)
    assert "Traceback" not in html
    assert "no timestamps in these sources" in html  # tau-bench has no clock: no timeline
    classes = ("premature_end", "missing_action", "wrong_arguments", "extra_write", "wrong_tool")
    assert any(c in html for c in classes)  # the action-diff classes are shown


@pytest.mark.notebook
@pytest.mark.external
def test_notebook_html_on_real_tau_bench(tmp_path, external_dir: Path) -> None:
    real = external_dir / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
    html = _render_html(tmp_path, [str(real)])
    assert "<img" in html and "Traceback" not in html
    for failure_class in ("wrong_arguments", "extra_write", "premature_end"):
        assert failure_class in html
    assert "▶" in html  # an exemplar marks the failing step in the raw trace
