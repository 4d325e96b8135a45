"""`contextos-lab demo --smoke`: the whole loop on a small budget (the full run is `make demo`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.proposals.files.emit import report_matches
from contextos_lab.reports.render import NOTEBOOKS
from contextos_lab.store.locations import default_key_file
from tests.reports.html_checks import check_reviewer_html


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

    # the three reviewer reports: figures, no code, warnings or cut tables
    run_dir = next((out / "reports").iterdir())
    check_reviewer_html(run_dir / "02_autotune_sweep.html", min_images=2)
    check_reviewer_html(run_dir / "03_heldout_gate.html", min_images=1)
    # notebook 01 is owned by issue 15; its timeline renders once it stops forcing Agg
    agg = 'matplotlib.use(\\"Agg\\")' in (NOTEBOOKS / "01_failure_clusters.ipynb").read_text()
    check_reviewer_html(
        run_dir / "01_failure_clusters.html",
        min_images=0 if agg else 1,
        summary=False,
        whole_tables=not agg,
    )

    # the same demo again: same changes, same evidence, so no new proposal file
    files = sorted((out / "proposals").iterdir())
    assert main(["demo", "--out", str(out), "--smoke"]) == 0
    again = capsys.readouterr().out
    assert sorted((out / "proposals").iterdir()) == files, again
    assert "already proposed" in again
