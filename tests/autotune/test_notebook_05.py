"""Notebook 05 (a round with an outside proposer, then pairwise preferences) runs under
papermill on the gate toy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.reports.render import to_html
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.store import ExperienceStore
from tests.gate.gate_toy import write_project
from tests.reports.html_checks import images

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
    # section 4: the judge's file was ingested (signed) and ranked, and the ranking plotted
    stored = ExperienceStore(f"sqlite:///{out.resolve()}/store.db").list(PreferenceEntry)
    assert len(stored) > 0 and all(e.signature for e in stored)
    cells = json.loads(out_nb.read_text())["cells"]
    ranked = _cell(cells, "rates = win_rates(")
    html = "".join("".join(o.get("data", {}).get("text/html", [])) for o in ranked["outputs"])
    # every judgement in the file accepted and stored (the words do not say "new": a re-run
    # finds them stored and must print the same line)
    assert "win_rate" in html and "ci_low" in html
    assert f"accepted {len(stored)}, quarantined 0" in _text(ranked)
    plotted = _cell(cells, "Bradley-Terry win rate vs")
    assert any("image/png" in o.get("data", {}) for o in plotted["outputs"])
    figures = sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
    html = to_html(out_nb).html.read_text(encoding="utf-8")  # the reviewer's HTML shows them all
    assert images(html) == figures >= 1 and "win_rate" in html
    # section 5: the evidence block each gated candidate would carry in its proposal
    evidence = _cell(cells, "proposal_preferences(preferences")
    shown = "".join("".join(o.get("data", {}).get("text/plain", [])) for o in evidence["outputs"])
    assert "win_rate" in shown and "cited" in shown


def _cell(cells: list[dict], needle: str) -> dict:
    return next(c for c in cells if c["cell_type"] == "code" and needle in "".join(c["source"]))


def _text(cell: dict) -> str:
    streams = [o for o in cell["outputs"] if o["output_type"] == "stream"]
    return "".join("".join(o.get("text", [])) for o in streams)
