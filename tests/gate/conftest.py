"""A toy project (spec, search and held-out cases) and a finished study for gate tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.autotune.sweep import sweep
from tests.gate.gate_toy import write_project


def study_for(spec: Path, out: Path, n_trials: int | None = None) -> str:
    """Run the study on the search set; returns its SQLite storage URL."""
    result = sweep(spec, out_dir=out, n_trials=n_trials, progress=False)
    return result.storage


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


@pytest.fixture
def ledger_file(tmp_path: Path) -> Path:
    return tmp_path / "ledger.jsonl"
