"""Monitor window verdicts, acting on them, source closure with recurrence, loop metrics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from contextos_lab.proposals.monitor.closure import (
    ClosureRefused,
    close_failed_replay,
    close_from_monitor,
    close_source,
)
from contextos_lab.proposals.monitor.metrics import adoption_flag, loop_metrics
from contextos_lab.proposals.monitor.monitor import act_on_verdict, monitor_window
from contextos_lab.proposals.replay.replay import run_replay_gate
from contextos_lab.schemas import Note, Patch, ReplayPacket, ResearchTask, Scorecard, StrategyRule
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.monitoring import SourceClosure

AT = datetime(2026, 6, 1, tzinfo=UTC)


def packet_for(insight, source_ref=None) -> ReplayPacket:
    """A replay case naming one of the insight's corrections as its pressure."""
    return ReplayPacket(
        packet_id=f"rp_{insight.feedback_ids[0]}",
        source_pressure={
            "source_type": "operator_correction",
            "source_ref": source_ref or insight.feedback_ids[0],
        },
        pinned_context_pack="pack@1.0.0",
        compiled_context_hash="a" * 64,
        side_effect_policy="dry_run",
        expected_outcome={"decision": "deny", "terminal_state": "DENIED"},
    )


def cards(n: int, *, policy=1.0, utility=0.9, key="support.refund.execute", tag="b"):
    return [
        Scorecard(
            scorecard_id=f"sc_{tag}{i}",
            subject_id=f"trace_{tag}{i}",
            decision_key=key,
            policy=policy if i % 2 == 0 else 1.0,
            safety=1.0,
            utility=utility - 0.01 * (i % 5),
            latency=200 + i % 7,
            economics=0.4,
            computed_at=AT,
        )
        for i in range(n)
    ]


def test_monitor_keep_with_evidence(example, store) -> None:
    v = monitor_window(example.release.rule, cards(40), cards(40, tag="w"), store=store, at=AT)
    assert v.verdict == "keep" and v.evidence["policy"].p_value is None
    assert v.n_window_matched == 40 and v.baseline_ref == example.release.rule.pinned_baseline
    assert store.find(v.monitor_verdict_id) == v


def test_monitor_roll_back_on_floor_regression_then_rollback(example, store, bundles) -> None:
    rule = example.release.rule
    v = monitor_window(rule, cards(40), cards(40, policy=0.0, tag="w"), store=store, at=AT)
    assert v.verdict == "roll_back" and v.evidence["policy"].worse
    assert v.evidence["policy"].p_value < 0.05 and "policy worse" in v.reasons[0]
    closed = act_on_verdict(v, rule, store=store, bundles=bundles, actor="oncall", at=AT)
    assert closed.status == LifecycleStatus.retired
    assert bundles.active("POLICY_RETURNS_V4").ref == rule.pinned_baseline
    first = close_from_monitor(store, v, example.insight.insight_id)
    assert first.status == "still_failing" and first.recurrence["failed_attempts"] == 1
    later = close_source(
        store,
        example.insight.insight_id,
        "fixed",
        "second attempt held",
        packet=packet_for(example.insight),
        at=AT + timedelta(days=9),
    )
    assert f"rp_{example.insight.feedback_ids[0]}" in later.evidence_ids
    assert later.recurrence["attempt"] == 2 and later.recurrence["failed_attempts"] == 1
    assert later.recurrence["prior_closure_ids"] == [first.closure_id]
    assert len(store.list(SourceClosure)) == 2 and store.verify().ok


def test_monitor_roll_back_on_recurrence(example) -> None:
    v = monitor_window(example.release.rule, cards(40), cards(40, tag="w"), recurrence=3, at=AT)
    assert v.verdict == "roll_back" and "3 new corrections" in v.reasons[-1]


def test_monitor_underpowered_keeps_window_open(example) -> None:
    v = monitor_window(example.release.rule, cards(5), cards(5, tag="w"), at=AT)
    assert v.verdict == "keep" and "underpowered" in v.reasons[0]


def test_monitor_retire_when_rule_governs_nothing(example, store, bundles) -> None:
    window = cards(40, key="support.account.update", tag="w")
    v = monitor_window(example.release.rule, cards(40), window, at=AT)
    assert v.verdict == "retire" and v.n_window_matched == 0
    closed = act_on_verdict(v, example.release.rule, store=store, bundles=bundles, actor="x")
    assert closed.status == "retired"
    assert bundles.active("POLICY_RETURNS_V4").rule("R_REFUND_REQUIRES_WINDOW_PROOF").deprecated


def test_monitor_supersede_when_a_newer_rule_patches_the_same_rule(example) -> None:
    rule = example.release.rule
    newer = rule.model_copy(
        update={"rule_id": "str_2026_06_01_newer", "released_at": rule.released_at + timedelta(1)}
    )
    v = monitor_window(rule, cards(40), cards(40, tag="w"), rules=[rule, newer], at=AT)
    assert v.verdict == "supersede" and v.superseded_by == "str_2026_06_01_newer"


def test_failed_replay_adds_recurrence(unreleased, store, bundles) -> None:
    body = {
        "rule_id": "R_REFUND_REQUIRES_IDV",
        "applies_to": {"intent": "support.refund.execute"},
        "then": {"allow": True, "requires": ["idv_check"]},
    }
    patch = Patch(target="policy_bundle", target_id="POLICY_RETURNS_V4", op="add", body=body)
    p = unreleased.proposal.model_copy(update={"patch": patch})
    verdict = run_replay_gate(p, None, bundles, at=AT)
    closure = close_failed_replay(store, p, verdict)
    assert closure.status == "still_failing" and "trace_refund_g16" in closure.rationale
    assert close_failed_replay(store, unreleased.proposal, unreleased.verdict) is None


def test_loop_metrics_from_the_store(example, store, bundles) -> None:
    base = example.proposal
    for n in (1, 2):
        p = base.model_copy(
            update={
                "proposal_id": f"sp_2026_05_10_rej{n}",
                "status": LifecycleStatus.proposed,
                "history": (),
                "reviewer_verdicts": {},
            }
        )
        p = advance(p, "reviewed", actor="rev", at=AT)
        p = advance(p, "rejected", actor="rev", rationale="noise", at=AT)
        store.append(p)
    close_source(
        store,
        example.insight.insight_id,
        "fixed",
        "monitor keep",
        packet=packet_for(example.insight),
        at=AT,
    )
    store.append_many(
        [
            Note(
                note_id=f"cs_2026_05_10_n{i}",
                kind="recurring_correction",
                subject="refunds",
                recommended_action="look",
                status=status,
                created_at=AT,
            )
            for i, status in enumerate(["acted_on", "open", "dismissed", "acted_on"])
        ]
    )
    store.append_many(
        [
            ResearchTask(
                research_task_id=f"rq_2026_05_10_t{i}",
                trigger_insight_id=example.insight.insight_id,
                question="which window applies?",
                scope={"domain": "support.refund", "max_external_calls": 0},
                status=status,
                confirmation={"promoted": promoted},
            )
            for i, (status, promoted) in enumerate([("completed", True), ("queued", False)])
        ]
    )
    m = loop_metrics(store)
    assert m.proposals_reviewed == 3 and m.proposals_released == 1
    assert m.adoption_rate == pytest.approx(1 / 3) and m.adoption_flag == "in band"
    first_fb = min(f.signed_at for f in example.feedback)
    expected = (example.release.rule.released_at - first_fb).total_seconds() / 3600
    assert m.correction_to_rule_hours == pytest.approx(expected)
    second = sorted(f.signed_at for f in example.feedback)[1]
    assert m.repeated_issue_close_hours == pytest.approx((AT - second).total_seconds() / 3600)
    assert m.rollback_rate == 0.0 and m.retire_rate == 0.0
    assert m.notes_acted_on_rate == 0.5 and m.research_patch_yield == 0.5
    rule = store.get(StrategyRule, example.release.rule.rule_id)
    from contextos_lab.proposals.release.release import rollback

    rollback(rule, store=store, bundles=bundles, actor="oncall", reason="p1", at=AT)
    assert loop_metrics(store).rollback_rate == 1.0
    assert "metric" in m.frame().columns


@pytest.mark.parametrize(
    ("rate", "flag"),
    [(None, "no reviewed"), (0.1, "noise"), (0.45, "in band"), (0.9, "rubber-stamping")],
)
def test_adoption_band_flag(rate, flag) -> None:
    assert flag in adoption_flag(rate)


def test_close_refuses_fixed_without_packet_and_missing_evidence(example, store) -> None:
    ins = example.insight.insight_id
    with pytest.raises(ClosureRefused, match="needs a ReplayPacket"):
        close_source(store, ins, "fixed", "looks fine", at=AT)
    with pytest.raises(ClosureRefused, match="names pressure fb_other"):
        close_source(store, ins, "fixed", "x", packet=packet_for(example.insight, "fb_other"))
    with pytest.raises(ClosureRefused, match="evidence mv_2026_01_01_nope is not in the store"):
        close_source(store, ins, "still_failing", "x", evidence_ids=["mv_2026_01_01_nope"])
    with pytest.raises(ClosureRefused, match="source ins_2026_01_01_nope is not in the store"):
        close_source(store, "ins_2026_01_01_nope", "invalid", "x")
    assert store.list(SourceClosure) == []
    done = close_source(store, ins, "fixed", "x", packet=packet_for(example.insight), at=AT)
    assert store.find(done.evidence_ids[-1]) is not None  # the packet is stored as evidence
