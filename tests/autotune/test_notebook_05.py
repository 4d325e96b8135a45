"""Notebook 05 (a round with an outside proposer) runs under papermill on the gate toy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gate.gate_toy import write_project

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "05_outside_proposers.ipynb"


@pytest.mark.notebook
def test_notebook_05_gates_sampler_and_outside_candidates_side_by_side(tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    spec = write_project(tmp_path / "p", n_trials=8)
    out_nb, out = tmp_path / "05.ipynb", tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out_nb),
        parameters={
            "spec_path": str(spec),
            "out_dir": str(out),
            "n_trials": 8,
            "ledger": str(tmp_path / "l.jsonl"),
            "n_boot": 200,
        },
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
    )
    gate = json.loads((out / "gate.json").read_text())
    by = {c["candidate_id"]: (c.get("proposer") or {}).get("by") for c in gate["candidates"]}
    text = json.dumps(json.loads(out_nb.read_text()))
    assert "reference-proposer" in text  # the outside proposal was made and shown
    if any(by.values()):  # feasible outside proposals are gated beside the sampler's
        assert "reference-proposer" in by.values()
