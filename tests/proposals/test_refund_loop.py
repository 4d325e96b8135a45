"""Seed 000's refund example end to end, and the replay gate's three outcomes."""

from __future__ import annotations

import pytest

from contextos_lab.example.loop_example import (
    GOLDENS_DIR,
    build_goldens,
    corrected_records,
    refund_feedback,
)
from contextos_lab.proposals.policy.bundle import PolicyBundle
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.release.why import why_rule_exists
from contextos_lab.proposals.replay.goldens import bundled_goldens, load_goldens
from contextos_lab.proposals.replay.replay import (
    BaselineDrift,
    check_reproduces,
    replay_decision_record,
    run_replay_gate,
)
from contextos_lab.schemas import Patch, ReplayVerdict, StrategyProposal, StrategyRule
from contextos_lab.schemas.lifecycle import LifecycleStatus


def test_refund_example_end_to_end(example, store) -> None:
    fb_ids = [f.id for f in example.feedback]
    assert len(fb_ids) >= 5
    assert example.insight.override_reason_class == "refund_window_misjudged"
    assert list(example.insight.feedback_ids) == fb_ids
    p = example.proposal
    assert p.proposal_class == "tighten_evidence_requirement"
    assert p.patch.body["then"]["requires"] == ["refund_window_evidence", "order_lookup"]
    assert p.patch.target_id == "POLICY_RETURNS_V4" and p.patch.op == "modify"
    assert example.verdict.status == "replay_clean"
    assert example.verdict.changed_unexpected == 0 and example.verdict.changed_to_expected == 7
    rule = example.release.rule
    assert rule.status == LifecycleStatus.released and p.status == LifecycleStatus.released
    assert list(rule.lineage.feedback_ids) == fb_ids
    assert rule.lineage.insight_id == example.insight.insight_id
    assert rule.lineage.replay_verdict_id == example.verdict.verdict_id
    assert rule.released_by == "user_change_control_3" and rule.effective_window is not None
    assert rule.pinned_baseline == example.release.baseline.ref
    assert store.get(StrategyRule, rule.rule_id) == rule
    assert store.get(ReplayVerdict, example.verdict.verdict_id) == example.verdict
    assert store.verify().ok
    why = why_rule_exists(store, rule.rule_id)
    assert why.feedback_ids == fb_ids
    assert "user_finance_lead_77" in why.render() and len(why.frame()) == len(fb_ids)


def test_bundled_goldens_are_what_the_builder_makes() -> None:
    assert load_goldens(GOLDENS_DIR / "POLICY_RETURNS_V4.jsonl") == build_goldens()


def test_pinned_baseline_reproduces_recorded_outputs_byte_for_byte(example, bundles) -> None:
    baseline = bundles.resolve(example.release.rule.pinned_baseline)
    for g in bundled_goldens("POLICY_RETURNS_V4"):
        again = replay_decision_record(g.record, baseline)
        assert again.outputs_hash == g.record.outputs_hash
        assert again.decision.decision == g.record.decision
    live = bundles.active("POLICY_RETURNS_V4")
    assert live.version == 2
    with pytest.raises(BaselineDrift, match="trace_refund_g08"):
        check_reproduces(bundled_goldens("POLICY_RETURNS_V4"), live)


def _variant(proposal: StrategyProposal, body: dict, op: str = "add") -> StrategyProposal:
    patch = Patch(target="policy_bundle", target_id="POLICY_RETURNS_V4", op=op, body=body)
    return proposal.model_copy(update={"patch": patch, "proposal_id": "sp_variant1"})


def test_patch_changing_an_unexpected_golden_is_replay_regression(unreleased, bundles) -> None:
    idv = {
        "rule_id": "R_REFUND_REQUIRES_IDV",
        "applies_to": {"intent": "support.refund.execute"},
        "then": {"allow": True, "requires": ["idv_check"]},
    }
    verdict = run_replay_gate(_variant(unreleased.proposal, idv), None, bundles)
    assert verdict.status == "replay_regression" and verdict.changed_unexpected > 0
    bad = {d.trace_id for d in verdict.details if d.classification == "changed_unexpected"}
    assert "trace_refund_g16" in bad  # approved with window proof, no IDV: not expected to move
    assert verdict.scorecards_delta.safety > 0  # the idv rule helps safety, yet is blocked


def test_patch_with_no_effect_is_replay_partial(unreleased, bundles) -> None:
    noop = {
        "rule_id": "R_ACCOUNT_ONLY",
        "applies_to": {"intent": "support.account.update"},
        "then": {"allow": False},
    }
    verdict = run_replay_gate(_variant(unreleased.proposal, noop), None, bundles)
    assert verdict.status == "replay_partial" and verdict.unchanged_baseline == 16


def test_verdict_id_is_deterministic(unreleased, bundles) -> None:
    again = run_replay_gate(unreleased.proposal, None, bundles)
    assert again.verdict_id == unreleased.verdict.verdict_id
    assert again == unreleased.verdict


def test_feedback_builder_signs_with_authorised_overriders() -> None:
    fb = refund_feedback(corrected_records(build_goldens()))
    assert len(fb) == 6 and {f.signed_by for f in fb} == {
        "user_finance_lead_77",
        "user_support_ops_12",
    }


def test_bundle_seed_is_v1(tmp_path) -> None:
    live = BundleRegistry(tmp_path).active("POLICY_RETURNS_V4")
    assert isinstance(live, PolicyBundle) and live.version == 1
