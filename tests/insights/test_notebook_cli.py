from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.cli import main

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
    assert data["quarantined"] == 7
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
