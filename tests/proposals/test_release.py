"""Release refusals, rollback to the exact pinned baseline, retire, supersede, lint."""

from __future__ import annotations

import pytest

from contextos_lab.example.loop_example import APPROVER, REVIEWERS
from contextos_lab.proposals.compile.compilers import compile_strategy_rule
from contextos_lab.proposals.release.lint import LintConflict, check_proposal, check_rule
from contextos_lab.proposals.release.release import (
    ReleaseRefused,
    release_proposal,
    retire,
    rollback,
)
from contextos_lab.proposals.release.reviews import sign_reviews
from contextos_lab.schemas import Patch, ReplayVerdict, ScorecardsDelta, StrategyRule
from contextos_lab.schemas.lifecycle import LifecycleStatus
from contextos_lab.store.signing import sign_entry


def _release(ex, store, bundles, **over):
    if "reviews" not in over:
        over["reviews"] = sign_reviews(store, ex.proposal.proposal_id, REVIEWERS)
    args = {"verdict": ex.verdict, "approver_id": APPROVER} | over
    proposal = args.pop("proposal", ex.proposal)
    return release_proposal(proposal, store=store, bundles=bundles, **args)


def _signed(store, ex, **verdicts):
    return sign_reviews(store, ex.proposal.proposal_id, REVIEWERS, verdicts)


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"approver_id": ""}, "no approver"),
        ({"approver_id": None}, "no approver"),
        ({"reviews": None}, "no signed compliance review"),
        ({"verdict": None}, "no replay verdict"),
    ],
)
def test_release_refuses_each_missing_precondition(unreleased, store, bundles, over, reason):
    with pytest.raises(ReleaseRefused, match=reason):
        _release(unreleased, store, bundles, **over)
    assert bundles.active("POLICY_RETURNS_V4").version == 1  # nothing was applied


def test_release_refuses_a_missing_role_and_a_rejecting_review(unreleased, store, bundles):
    signed = _signed(store, unreleased, security="reject")
    with pytest.raises(
        ReleaseRefused, match=f"security review by {REVIEWERS['security']} is reject"
    ):
        _release(unreleased, store, bundles, reviews=signed)
    without = {k: v for k, v in signed.items() if k != "reliability"}
    with pytest.raises(ReleaseRefused, match="no signed reliability review"):
        _release(unreleased, store, bundles, reviews=without)


def test_release_refuses_plain_string_verdicts(unreleased, store, bundles):
    plain = {"compliance": "approve", "reliability": "approve", "security": "approve"}
    with pytest.raises(ReleaseRefused, match="plain str, not a signed ReviewVerdict") as exc:
        _release(unreleased, store, bundles, reviews=plain)
    assert "no signed compliance review" in str(exc.value)
    assert bundles.active("POLICY_RETURNS_V4").version == 1


def test_release_refuses_forged_and_unsigned_verdicts(unreleased, store, bundles):
    signed = _signed(store, unreleased)
    # a verdict flipped after signing, one signed with another key, one never signed
    tampered = signed["compliance"].model_copy(update={"rationale": "edited after signing"})
    other_key = sign_entry(
        signed["reliability"].model_copy(update={"signature": None}), b"an-attacker-key"
    )
    unsigned = signed["security"].model_copy(update={"signature": None})
    forged = {"compliance": tampered, "reliability": other_key, "security": unsigned}
    with pytest.raises(ReleaseRefused) as exc:
        _release(unreleased, store, bundles, reviews=forged)
    msg = str(exc.value)
    assert msg.count("is forged: its signature does not verify") == 2 and "is unsigned" in msg
    assert bundles.active("POLICY_RETURNS_V4").version == 1
    # one forged verdict among valid ones still refuses the release
    with pytest.raises(ReleaseRefused, match="forged"):
        _release(unreleased, store, bundles, reviews=[*signed.values(), tampered])


def test_release_refuses_a_review_of_another_subject_and_self_approval(unreleased, store, bundles):
    other = sign_reviews(store, unreleased.insight.insight_id, REVIEWERS)
    with pytest.raises(ReleaseRefused, match=f"on {unreleased.insight.insight_id}, not"):
        _release(unreleased, store, bundles, reviews=other)
    with pytest.raises(ReleaseRefused, match="approval needs a second person"):
        _release(unreleased, store, bundles, approver_id=REVIEWERS["compliance"])


def test_release_with_signed_reviews_records_them(unreleased, store, bundles):
    from contextos_lab.proposals.release.checklist import release_checklist

    done = _release(unreleased, store, bundles)
    assert done.rule.status == LifecycleStatus.released
    assert set(done.proposal.reviewer_verdicts) == {"compliance", "reliability", "security"}
    assert all("rvw_" in v for v in done.proposal.reviewer_verdicts.values())
    sheet = release_checklist(store, unreleased.proposal.proposal_id)
    assert (sheet["status"] == "checked").all(), sheet


@pytest.mark.parametrize("status", ["replay_regression", "replay_partial"])
def test_release_refuses_unclean_verdicts(unreleased, store, bundles, status):
    details = [d.model_dump() for d in unreleased.verdict.details]
    if status == "replay_regression":
        details[0]["classification"] = "changed_unexpected"
        changed = {"changed_unexpected": 1, "unchanged_baseline": 8, "goldens_changed": 8}
    else:
        for d in details:
            d["classification"] = "unchanged_baseline"
        changed = {"changed_to_expected": 0, "unchanged_baseline": 16, "goldens_changed": 0}
    data = unreleased.verdict.model_dump() | changed | {"status": status, "details": details}
    bad = ReplayVerdict.model_validate(data)
    with pytest.raises(ReleaseRefused, match=f"replay status {status}"):
        _release(unreleased, store, bundles, verdict=bad)


def test_release_refuses_hard_gate_regression(unreleased, store, bundles):
    delta = ScorecardsDelta(policy=0.1, safety=-0.01, utility=0.2, latency=0, cost=0)
    bad = unreleased.verdict.model_copy(update={"scorecards_delta": delta})
    with pytest.raises(ReleaseRefused, match="safety delta below zero"):
        _release(unreleased, store, bundles, verdict=bad)


def test_release_refuses_when_the_baseline_moved(unreleased, store, bundles):
    live = bundles.active("POLICY_RETURNS_V4")
    moved = live.model_copy(update={"version": 2, "change": "hand edit"})
    bundles.activate(moved, actor="someone", reason="out of band")
    with pytest.raises(ReleaseRefused, match="replay pinned"):
        _release(unreleased, store, bundles)


def test_rollback_restores_pinned_baseline_exactly(example, store, bundles):
    rule = example.release.rule
    baseline_hash = example.release.baseline.content_hash()
    assert bundles.active("POLICY_RETURNS_V4").content_hash() != baseline_hash
    closed, live = rollback(rule, store=store, bundles=bundles, actor="oncall", reason="p1")
    assert live.content_hash() == baseline_hash and live.ref == rule.pinned_baseline
    assert closed.status == LifecycleStatus.retired
    assert closed.history[-1].rationale.startswith("rollback: p1")
    assert closed.history[-1].is_rollback  # what the rollback-rate metric reads
    assert closed.effective_window.to is not None
    assert store.get(StrategyRule, rule.rule_id).status == LifecycleStatus.retired
    with pytest.raises(ValueError, match="retired"):
        rollback(closed, store=store, bundles=bundles, actor="oncall", reason="again")
    assert store.verify().ok


def test_retire_deprecates_the_rule_forward(example, store, bundles):
    closed = retire(example.release.rule, store=store, bundles=bundles, actor="x", reason="old")
    live = bundles.active("POLICY_RETURNS_V4")
    assert live.version == 3 and live.rule("R_REFUND_REQUIRES_WINDOW_PROOF").deprecated
    assert closed.status == LifecycleStatus.retired


def test_lint_refuses_a_second_patch_of_an_actively_patched_rule(example, store, bundles):
    other = example.proposal.model_copy(
        update={
            "proposal_id": "sp_other1",
            "patch": example.proposal.patch.model_copy(
                update={"body": {**example.proposal.patch.body, "then": {"allow": True}}}
            ),
        }
    )
    with pytest.raises(LintConflict, match="already patched"):
        check_proposal(other, bundles.active("POLICY_RETURNS_V4"), [example.release.rule])


def test_lint_refuses_contradicting_allow(unreleased, bundles):
    body = {
        "rule_id": "R_REFUND_NEVER",
        "applies_to": {"intent": "support.refund.execute"},
        "then": {"allow": False},
    }
    patch = Patch(target="policy_bundle", target_id="POLICY_RETURNS_V4", op="add", body=body)
    p = unreleased.proposal.model_copy(update={"patch": patch})
    with pytest.raises(LintConflict, match="disagree on allow"):
        check_proposal(p, bundles.active("POLICY_RETURNS_V4"), [])
    bad_op = p.model_copy(update={"patch": patch.model_copy(update={"op": "modify"})})
    with pytest.raises(LintConflict, match="does not apply"):
        check_proposal(bad_op, bundles.active("POLICY_RETURNS_V4"), [])


def test_lint_refuses_conflicting_tool_preferences(example):
    a = compile_strategy_rule(
        example.insight, "planner", value={"prefer_tool": "policy.eval_v2", "over": "policy.eval"}
    )
    b = compile_strategy_rule(
        example.insight, "planner", value={"prefer_tool": "policy.eval", "over": "policy.eval_v2"}
    )
    active = StrategyRule.model_validate(a.model_dump() | {"status": "released"} | _released(a))
    with pytest.raises(LintConflict, match="prefer_tool"):
        check_rule(b, [active])
    with pytest.raises(LintConflict, match="already sets"):
        check_rule(a.model_copy(update={"rule_id": "str_copy1"}), [active])
    retrieval = compile_strategy_rule(example.insight, "retrieval")
    check_rule(retrieval, [active])  # another layer: no conflict


def _released(rule: StrategyRule) -> dict:
    from datetime import UTC, datetime

    now = datetime(2026, 5, 1, tzinfo=UTC)
    return {
        "released_at": now,
        "released_by": "x",
        "pinned_baseline": "none",
        "effective_window": {"from": now},
        "lineage": {"feedback_ids": [], "insight_id": "ins_x1"},
    }


def test_supersede_on_release(example, store, bundles):
    """A later release that replaces the rule on purpose marks the old one superseded."""
    from contextos_lab.proposals.policy.bundle import apply_patch, evaluate
    from contextos_lab.proposals.release.release import record_replay, send_to_replay
    from contextos_lab.proposals.replay.goldens import ExpectedOutcome, GoldenCase
    from contextos_lab.proposals.replay.replay import run_replay_gate
    from contextos_lab.schemas import StrategyProposal

    body = {**example.proposal.patch.body, "rationale": "identity too"}
    body["then"] = {
        "allow": True,
        "requires": ["order_lookup", "refund_window_evidence", "idv_check"],
    }
    live = bundles.active("POLICY_RETURNS_V4")
    patch = Patch(target="policy_bundle", target_id="POLICY_RETURNS_V4", op="modify", body=body)
    p = StrategyProposal(
        proposal_id="sp_2026_05_20_next1",
        insight_id=example.insight.insight_id,
        proposal_class="tighten_evidence_requirement",
        patch=patch,
        rationale="supersede with identity check",
        expected_impact={"runs_affected_per_day": 1, "expected_decision_change_rate": 0.1},
        rollback_target=live.ref,
    )
    store.append(p)
    p = send_to_replay(p, actor="bot", store=store)
    candidate = apply_patch(live, patch)
    goldens = []
    for g in example.goldens:
        record = g.record.model_copy(update={"outputs_hash": None})
        after = evaluate(candidate, record)
        exp = None
        if after != evaluate(live, record):
            exp = ExpectedOutcome(decision=after.decision, evidence_missing=after.evidence_missing)
        goldens.append(GoldenCase(record=record, expected_post_patch_outcome=exp))
    verdict = run_replay_gate(p, goldens, bundles, store=store)
    assert verdict.status == "replay_clean"
    p = record_replay(p, verdict, actor="bot", store=store)
    reviews = sign_reviews(store, p.proposal_id, REVIEWERS)
    old = example.release.rule
    with pytest.raises(ReleaseRefused, match="already patched"):
        release_proposal(p, verdict, APPROVER, reviews, store=store, bundles=bundles)
    done = release_proposal(
        p, verdict, APPROVER, reviews, store=store, bundles=bundles, supersedes=old.rule_id
    )
    assert store.get(StrategyRule, old.rule_id).status == LifecycleStatus.superseded
    assert done.bundle.version == 3 and done.rule.pinned_baseline == live.ref
