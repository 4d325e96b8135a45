"""One compiler arm per reason class, the unknown-class error, and adjustment-layer rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from contextos_lab.example.loop_example import baseline_bundle
from contextos_lab.proposals.compile.compilers import (
    CompileError,
    UnknownReasonClass,
    compile_strategy_rule,
    propose_from_insight,
)
from contextos_lab.proposals.policy.bundle import apply_patch
from contextos_lab.schemas import AdjustmentLayer, InsightCluster
from tests.factories import decision_record

T = datetime(2026, 5, 9, tzinfo=UTC)


def cluster(reason: str, key: str = "support.refund.execute", **over) -> InsightCluster:
    fields = {
        "insight_id": f"ins_{reason.replace('_', '')[:12]}",
        "decision_key": key,
        "override_reason_class": reason,
        "count": 5,
        "feedback_ids": [f"fb_2026_05_09_c{i}" for i in range(5)],
        "earliest": T,
        "latest": T + timedelta(days=2),
        "representative_evidence_refs": ["order_lookup:o1", "refund_window_evidence"],
    } | over
    return InsightCluster(**fields)


def test_refund_window_arm_is_the_seed_proposal() -> None:
    p = propose_from_insight(cluster("refund_window_misjudged"))
    assert p.proposal_class == "tighten_evidence_requirement"
    assert p.patch.model_dump(mode="json") == {
        "target": "policy_bundle",
        "target_id": "POLICY_RETURNS_V4",
        "op": "modify",
        "body": {
            "rule_id": "R_REFUND_REQUIRES_WINDOW_PROOF",
            "applies_to": {"intent": "support.refund.execute"},
            "then": {"allow": True, "requires": ["refund_window_evidence", "order_lookup"]},
            "rationale": "Refund window must be evidenced; 5 prior corrections.",
        },
    }
    assert p.expected_impact.expected_decision_change_rate == 0.012
    assert p.status == "proposed" and p.rollback_target is None
    pinned = propose_from_insight(cluster("refund_window_misjudged"), bundles=baseline_bundle())
    assert pinned.rollback_target == baseline_bundle().ref


def test_missing_idv_arm_requires_idv_check() -> None:
    p = propose_from_insight(cluster("missing_idv_check"), bundles=baseline_bundle())
    assert p.proposal_class == "tighten_evidence_requirement"
    assert p.patch.op == "add" and p.patch.body["rule_id"] == "R_REFUND_REQUIRES_IDV"
    assert p.patch.body["then"]["requires"] == ["idv_check"]
    apply_patch(baseline_bundle(), p.patch)  # applies cleanly
    acct = propose_from_insight(cluster("missing_idv_check", key="support.account.update"))
    assert acct.patch.target_id == "POLICY_ACCOUNT_V2"


def test_approval_threshold_arm_lowers_the_amount_needing_approval() -> None:
    records = [
        decision_record(i, inputs={"amount": a}, evidence_refs=["order_lookup:o"])
        for i, a in enumerate([620, 910, 780])
    ]
    c = cluster("approval_threshold_too_low")
    p = propose_from_insight(c, bundles=baseline_bundle(), records=records)
    assert p.proposal_class == "raise_approval_threshold"
    assert p.patch.body["rule_id"] == "R_REFUND_APPROVAL_GATE" and p.patch.op == "modify"
    assert p.patch.body["then"]["approval_above"] == 600.0
    assert p.expected_impact.expected_decision_change_rate == 1.0  # all three now escalate
    hinted = cluster(
        "approval_threshold_too_low", representative_field_overrides={"approval_above": 750}
    )
    assert propose_from_insight(hinted).patch.body["then"]["approval_above"] == 750
    with pytest.raises(CompileError, match="no amounts"):
        propose_from_insight(c)
    with pytest.raises(CompileError, match="not below"):
        high = [decision_record(0, inputs={"amount": 5000})]
        propose_from_insight(c, bundles=baseline_bundle(), records=high)


def test_unknown_reason_class_is_an_error_naming_it() -> None:
    with pytest.raises(UnknownReasonClass, match="reason_class=wrong_tool"):
        propose_from_insight(cluster("wrong_tool"))


@pytest.mark.parametrize(
    ("reason", "layer", "kind"),
    [
        ("wrong_tool", "planner", "tool_preference"),
        ("evidence_missing", "retrieval", "evidence_injection"),
        ("over_escalation", "memory_recall", "correction_recall"),
        ("policy_misapplied", "prompt", "instruction"),
    ],
)
def test_adjustment_layer_rules(reason, layer, kind) -> None:
    value = {"prefer_tool": "policy.eval_v2", "over": "policy.eval"} if layer == "planner" else {}
    rule = compile_strategy_rule(cluster(reason), value=value)
    assert rule.adjustment.layer == AdjustmentLayer(layer) and rule.adjustment.type == kind
    assert rule.trigger == {"from_insight": cluster(reason).insight_id}
    assert rule.status == "proposed" and rule.applies_to == {"intent": "support.refund.execute"}
    if layer == "retrieval":
        assert rule.adjustment.value == {"inject": ["order_lookup", "refund_window_evidence"]}


def test_adjustment_rule_errors() -> None:
    with pytest.raises(CompileError, match="prefer_tool"):
        compile_strategy_rule(cluster("wrong_tool"))
    with pytest.raises(CompileError, match="name a layer"):
        compile_strategy_rule(cluster("refund_window_misjudged"))
    with pytest.raises(CompileError, match="budget_allocation needs positive limits"):
        compile_strategy_rule(cluster("wrong_tool"), "budget_allocation")
    with pytest.raises(CompileError, match="tool_selection needs tools"):
        compile_strategy_rule(cluster("wrong_tool"), "tool_selection")
