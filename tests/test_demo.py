"""`contextos-lab demo --smoke`: the whole loop on a small budget (the full run is `make demo`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.cli import main
from contextos_lab.proposals.emit import report_matches
from contextos_lab.store.locations import default_key_file


@pytest.mark.notebook
def test_demo_smoke_leaves_a_proposal_whose_report_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CONTEXTOS_SIGNING_KEY", raising=False)
    monkeypatch.delenv("CONTEXTOS_SIGNING_KEY_FILE", raising=False)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--smoke"]) == 0
    printed = capsys.readouterr().out
    proposals = sorted((out / "proposals").glob("at_*.json"))
    assert proposals, printed
    assert all(report_matches(p) for p in proposals)
    key = default_key_file()  # the user's configuration folder, not beside the database
    assert key.exists() and key.stat().st_mode & 0o077 == 0  # created, private, not in code
    assert out not in key.parents
    assert json.loads((out / ".contextos" / "authorised_overriders.json").read_text())
    assert "proposal files:" in printed and "reports:" in printed
    assert (out / "01_failure_clusters" / "insights.json").exists()
