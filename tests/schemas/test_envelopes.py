"""Envelopes: the seeds' exact shapes, frozen, versioned, readable in notebooks."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from contextos_lab.cli.app import main
from contextos_lab.schemas import (
    ENVELOPES,
    SCHEMA_VERSION,
    EnvelopeList,
    FeedbackRecord,
    Insight,
    Note,
    ReplayVerdict,
    ResearchTask,
    StrategyRule,
)
from contextos_lab.schemas.base import frame_dtypes
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.reason_classes import REGISTRY_PATH
from tests.factories import decision_record, feedback_entry

# The JSON examples of seed 001, verbatim.
SEED_001 = {
    Insight: {
        "insight_id": "ins_2026_05_04_a17",
        "kind": "failure_cluster",
        "intent": "support.refund",
        "pattern": "policy.eval denial after order_lookup when refund_amount > 800 INR",
        "occurrences": 23,
        "first_seen": "2026-04-21T09:14:00Z",
        "last_seen": "2026-05-04T08:01:00Z",
        "evidence_refs": ["dr_2026_04_21_x12", "dr_2026_05_03_q88"],
        "confidence": 0.91,
        "status": "proposed",
    },
    StrategyRule: {
        "strategy_rule_id": "str_2026_05_04_b03",
        "applies_to": {"intent": "support.refund"},
        "trigger": {"from_insight": "ins_2026_05_04_a17"},
        "adjustment": {
            "layer": "planner",
            "type": "tool_preference",
            "value": {"prefer_tool": "adp_policy.eval_with_promotion", "over": "adp_policy.eval"},
        },
        "release_gate_target": "support.refund",
        "status": "proposed",
    },
    FeedbackRecord: {
        "feedback_id": "fb_2026_05_04_c19",
        "kind": "correction",
        "context": {"decision_record_id": "dr_2026_05_04_a17", "intent": "support.refund"},
        "operator": "user_finance_lead_77",
        "correction": "Refund eligibility should consider prior corrections within 90 days",
        "applied_to_record": "dr_2026_05_04_a17",
        "evidence_refs": ["dr_2026_05_04_a17"],
        "captured_at": "2026-05-04T09:32:00Z",
    },
    Note: {
        "note_id": "cs_2026_05_04_d04",
        "kind": "open_loop_aging",
        "subject": "GATE_FINANCE_APPROVAL pending > 24h on session sess_42f1",
        "recommended_action": "page on-call finance approver or auto-deny per policy",
        "evidence_refs": ["session:sess_42f1", "audit:audit_inv_22_GATE_FINANCE_APPROVAL"],
        "status": "open",
        "created_at": "2026-05-04T10:00:00Z",
    },
    ResearchTask: {
        "research_task_id": "rq_2026_05_04_e02",
        "trigger_insight_id": "ins_2026_05_04_a17",
        "question": "What are the supplier-side rules that override our default refund window?",
        "scope": {"domain": "support.refund", "max_external_calls": 0},
        "status": "queued",
        "produces": "knowledge_patch",
    },
}


@pytest.mark.parametrize("model", list(SEED_001), ids=lambda m: m.__name__)
def test_seed_001_examples_validate(model) -> None:
    item = model.model_validate(SEED_001[model])
    assert item.schema_version == SCHEMA_VERSION
    again = model.model_validate_json(item.model_dump_json(by_alias=True))
    assert again == item and again.content_hash() == item.content_hash()


def test_seed_enums_are_exact() -> None:
    assert {k.value for k in Insight.model_fields["kind"].annotation} == {
        "failure_cluster",
        "gap_detected",
        "blocked_decision",
        "common_detour",
        "over-escalation",
    }
    schema = json.dumps(ReplayVerdict.model_json_schema())
    for status in ("replay_clean", "replay_regression", "replay_partial"):
        assert status in schema
    for kind in ("correction", "tip", "escalation_rationale", "gate_rationale"):
        assert kind in json.dumps(FeedbackRecord.model_json_schema())


def test_timestamps_must_be_timezone_aware() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        feedback_entry(0, signed_at=datetime(2026, 5, 9, 9, 31))


def test_unknown_reason_class_names_the_registry() -> None:
    with pytest.raises(ValidationError) as exc:
        feedback_entry(0, override_reason_class="vibes")
    assert REGISTRY_PATH.name in str(exc.value) and "vibes" in str(exc.value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("fb_2026_05_09_a17", True),
        ("fb_a17", True),
        ("fb_2026_5_9_a17", False),
        ("ins_2026_05_09_a17", False),
        ("fb_2026_05_09_A17", False),
    ],
)
def test_feedback_id_shape(value: str, ok: bool) -> None:
    if ok:
        assert feedback_entry(0, id=value).id == value
    else:
        with pytest.raises(ValidationError, match="shape"):
            feedback_entry(0, id=value)


def test_new_id_is_deterministic_with_seed() -> None:
    at = datetime.fromisoformat("2026-05-09T09:31:00+00:00")
    assert new_id("fb", at, seed="x") == new_id("fb", at, seed="x")
    assert new_id("fb", at, seed="x").startswith("fb_2026_05_09_")
    assert new_id("fb", at) != new_id("fb", at)


def test_envelopes_are_frozen_and_refuse_unknown_fields() -> None:
    record = decision_record(0)
    with pytest.raises(ValidationError, match="frozen"):
        record.decision = "deny"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        decision_record(0, surprise=1)


def test_replay_verdict_totals_must_agree_with_details() -> None:
    base = {
        "verdict_id": "rv_2026_05_04_a1",
        "proposal_id": "sp_b03",
        "goldens_total": 2,
        "goldens_changed": 1,
        "unchanged_baseline": 1,
        "changed_to_expected": 1,
        "changed_unexpected": 0,
        "scorecards_delta": {"policy": 0, "safety": 0, "utility": 0.1, "latency": 0, "cost": 0},
        "details": [
            {"trace_id": "t1", "classification": "unchanged_baseline"},
            {"trace_id": "t2", "classification": "changed_to_expected"},
        ],
        "computed_at": "2026-05-04T09:00:00Z",
    }
    assert ReplayVerdict.model_validate({**base, "status": "replay_clean"})
    with pytest.raises(ValidationError, match="details imply replay_clean"):
        ReplayVerdict.model_validate({**base, "status": "replay_partial"})


def test_released_rule_needs_its_release_fields() -> None:
    data = {**SEED_001[StrategyRule], "status": "released"}
    with pytest.raises(ValidationError, match="released rule is missing"):
        StrategyRule.model_validate(data)


def test_repr_html_and_frames() -> None:
    items = EnvelopeList([decision_record(i) for i in range(3)])
    html = items._repr_html_()
    assert "3 × DecisionRecord" in html and "dr_2026_05_01_r2" in html
    assert "<table" in decision_record(0)._repr_html_()
    frame = items.to_frame()
    assert len(frame) == 3 and list(frame.columns) == list(frame_dtypes(type(items[0])))
    assert str(frame.dtypes["decided_at"]) == "datetime64[us, UTC]"
    assert str(frame.dtypes["status"]) == "string"


def test_schema_command_writes_one_file_per_envelope(tmp_path: Path, capsys) -> None:
    assert main(["schema", "--out", str(tmp_path)]) == 0
    written = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert written == sorted(ENVELOPES)
    schema = json.loads((tmp_path / "FeedbackEntry.json").read_text())
    assert "override_reason_class" in schema["properties"]
    assert "schema_version" in schema["properties"]
