"""`sweep --store` stores what it emits, and cites the store's preference judgements."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.schemas.tuning import TuningProposal
from contextos_lab.store import ExperienceStore
from tests.gate.gate_toy import write_project

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.notebook
def test_sweep_with_a_store_stores_the_proposal_with_its_preference_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=6)
    out, url = tmp_path / "out", f"sqlite:///{tmp_path}/store.db"
    assert main(["search", str(spec), "--out", str(out), "--no-progress"]) == 0
    prefs = tmp_path / "prefs.jsonl"  # every trial judged against every other on 10 cases
    judge = [sys.executable, str(REPO / "examples" / "reference_proposer" / "judge.py"),
             str(out / "runs" / "gate_toy_run"), "--out", str(prefs), "--cases", "10",
             "--trials", *map(str, range(6))]  # fmt: skip
    assert subprocess.run(judge, check=False).returncode == 0
    first = prefs.read_text()
    assert subprocess.run(judge, check=False).returncode == 0
    assert prefs.read_text() == first  # the same layout, the same judgements: ingested once
    named = ["--project", str(BUNDLED_PROJECT)]  # a fresh store's first write names its project
    assert main(["ingest", "preferences", str(prefs), "--store", url, *named]) == 0
    assert main(["ingest", "preferences", str(prefs), "--store", url]) == 0
    assert "(0 new, 150 already stored)" in capsys.readouterr().out
    sweep = ["sweep", str(spec), "--out", str(out), "--ledger", str(tmp_path / "l.jsonl"),
             "--store", url]  # fmt: skip
    assert main(sweep) == 0
    printed = capsys.readouterr().out
    files = sorted((out / "proposals").glob("at_*.json"))
    assert len(files) == 1 and f"stored in {url}: 1 proposal(s)/task(s)" in printed
    data = json.loads(files[0].read_text())
    kept = ExperienceStore(url).get(TuningProposal, data["tuning_proposal_id"])
    assert kept is not None and kept.gate == data["gate"]
    (evidence,) = data["gate"]["preferences"]
    assert evidence["subject"] == f"gate_toy_run/trial_{data['gate']['trial_number']}"
    assert evidence["comparisons"] == 5 * 10 == len(evidence["preference_ids"])
