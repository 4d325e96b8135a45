"""Seed 001's own JSON examples validate as they stand (embedded verbatim from the seed), and
seed 000's StrategyRule statuses (`active`, `deprecated`) are accepted."""

from __future__ import annotations

import json

import pytest

from contextos_lab.schemas import (
    FeedbackRecord,
    Insight,
    Note,
    ResearchTask,
    StrategyRule,
    TuningProposal,
)
from contextos_lab.schemas.lifecycle import LifecycleStatus

INSIGHT = """{
  "insight_id": "ins_2026_05_04_a17",
  "kind": "failure_cluster",
  "intent": "support.refund",
  "pattern": "policy.eval denial after order_lookup when refund_amount > 800 INR",
  "occurrences": 23,
  "first_seen": "2026-04-21T09:14:00Z",
  "last_seen": "2026-05-04T08:01:00Z",
  "evidence_refs": ["dr_2026_04_21_x12", "dr_2026_05_03_q88"],
  "confidence": 0.91,
  "status": "proposed"
}"""

STRATEGY_RULE = """{
  "strategy_rule_id": "str_2026_05_04_b03",
  "applies_to": { "intent": "support.refund" },
  "trigger": { "from_insight": "ins_2026_05_04_a17" },
  "adjustment": {
    "layer": "planner",
    "type": "tool_preference",
    "value": { "prefer_tool": "adp_policy.eval_with_promotion", "over": "adp_policy.eval" }
  },
  "release_gate_target": "support.refund",
  "status": "proposed"
}"""

FEEDBACK_RECORD = """{
  "feedback_id": "fb_2026_05_04_c19",
  "kind": "correction",
  "context": { "decision_record_id": "dr_2026_05_04_a17", "intent": "support.refund" },
  "operator": "user_finance_lead_77",
  "correction": "Refund eligibility should consider prior corrections within 90 days",
  "applied_to_record": "dr_2026_05_04_a17",
  "evidence_refs": ["dr_2026_05_04_a17"],
  "captured_at": "2026-05-04T09:32:00Z"
}"""

NOTE = """{
  "note_id": "cs_2026_05_04_d04",
  "kind": "open_loop_aging",
  "subject": "GATE_FINANCE_APPROVAL pending > 24h on session sess_42f1",
  "recommended_action": "page on-call finance approver or auto-deny per policy",
  "evidence_refs": ["session:sess_42f1", "audit:audit_inv_22_GATE_FINANCE_APPROVAL"],
  "status": "open"
}"""

RESEARCH_TASK = """{
  "research_task_id": "rq_2026_05_04_e02",
  "trigger_insight_id": "ins_2026_05_04_a17",
  "question": "What are the supplier-side rules that override our default 90-day refund window?",
  "scope": { "domain": "support.refund", "max_external_calls": 0 },
  "status": "queued",
  "produces": "knowledge_patch"
}"""

TUNING_PROPOSAL = """{
  "tuning_proposal_id": "at_2026_05_04_f01",
  "target": { "intent": "support.refund", "metric": "economics_cents_per_decision", "direction": "decrease", "guardrails": ["safety>=1.0", "policy>=1.0"] },
  "candidate_change": {
    "layer": "retrieval",
    "diff": { "max_hops": { "from": 3, "to": 2 }, "top_k": { "from": 10, "to": 6 } }
  },
  "expected_delta": { "economics_cents_per_decision": -0.18, "utility": -0.01 },
  "evaluation_run_id": "eval_2026_05_04_a01",
  "status": "proposed"
}"""  # noqa: E501 (verbatim from the seed)

EXAMPLES = [
    (Insight, INSIGHT),
    (StrategyRule, STRATEGY_RULE),
    (FeedbackRecord, FEEDBACK_RECORD),
    (Note, NOTE),
    (ResearchTask, RESEARCH_TASK),
    (TuningProposal, TUNING_PROPOSAL),
]


@pytest.mark.parametrize(("model", "text"), EXAMPLES, ids=[m.__name__ for m, _ in EXAMPLES])
def test_seed_001_example_validates_as_it_stands(model, text) -> None:
    data = json.loads(text)
    item = model.model_validate(data)
    dumped = item.model_dump(mode="json", by_alias=True)
    for key, value in data.items():  # every field the seed wrote survives, by its seed name
        got = dumped.get(key, getattr(item, key, None))
        if key == "strategy_rule_id":
            got = item.rule_id
        if isinstance(value, str) and key.endswith(("_seen", "_at")):
            assert got.replace("+00:00", "Z") == value, key
        elif isinstance(value, (int, float, str, bool)) or value is None:
            assert got == value, key


@pytest.mark.parametrize(
    ("seed_status", "status"),
    [("active", LifecycleStatus.released), ("deprecated", LifecycleStatus.retired)],
)
def test_seed_000_strategy_rule_statuses_are_accepted(seed_status, status) -> None:
    rule = json.loads(STRATEGY_RULE) | {"status": seed_status}
    if seed_status == "active":  # seed 000's released envelope
        rule |= {
            "proposal_id": "sp_b03",
            "released_at": "2026-05-09T10:00:00Z",
            "released_by": "user_change_control_3",
            "pinned_baseline": "BUNDLE@v1#" + "0" * 64,
            "effective_window": {"from": "2026-05-09T10:00:00Z"},
            "lineage": {
                "feedback_ids": ["fb_2026_05_09_a17"],
                "insight_id": "ins_a17",
                "replay_verdict_id": "rv_a1",
            },
        }
    assert StrategyRule.model_validate(rule).status == status
