"""A research question asks for the missing evidence kind, never the decision key."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from contextos_lab.cli.app import main
from contextos_lab.insights.notes.research_queue import evidence_subject

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"


def test_the_subject_is_the_evidence_kind() -> None:
    key = {"decision_key": "access.request.grant", "override_reason_class": "no_training"}
    with_kinds = SimpleNamespace(support={"evidence_missing": ["training_record"]})
    assert evidence_subject(with_kinds, key) == "training_record"
    without = SimpleNamespace(support={})
    assert "access.request.grant" not in evidence_subject(without, key)
    assert evidence_subject(without, {"ref": "manager_approval:12"}) == "manager_approval"


def test_queued_questions_never_ask_for_the_decision_key(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    store = ["--store", f"sqlite:///{tmp_path}/s.db", "--project", str(CODING)]
    data = CODING / "data"
    assert main(["ingest", "decisions", str(data / "decisions.jsonl"), *store]) == 0
    assert main(["ingest", "feedback", str(data / "feedback.jsonl"), "--overriders",
                 str(data / "authorised_overriders.json"), *store]) == 0  # fmt: skip
    assert main(["cluster", *store]) == 0
    capsys.readouterr()
    assert main(["research", "queue", *store]) == 0
    out = capsys.readouterr().out
    asked = re.findall(r"What source would supply (.+?) for (\S+),", out)
    assert asked, out
    assert all(subject != key for subject, key in asked), asked
