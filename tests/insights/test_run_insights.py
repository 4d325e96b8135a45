from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from contextos_lab.harness.reference.synthetic_feedback import support_desk
from contextos_lab.insights.runs.insights import (
    RULES,
    failure_table,
    find_run_insights,
    measure,
    modal_path,
    runs_frame,
)
from contextos_lab.insights.split import HELDOUT, SEARCH, SplitSpec
from contextos_lab.schemas import DecisionRecord, FeedbackEntry, InsightKind, TerminalStatus

T0 = datetime(2026, 5, 1, tzinfo=UTC)
S = TerminalStatus


def rec(i, key, status=S.completed, *, reason=None, tools=("a",), missing=(), expected=None, day=0):
    inputs = {}
    if reason:
        inputs["reason_class"] = reason
    if expected:
        inputs["expected_decision"] = expected
    return DecisionRecord(
        record_id=f"dr_{i:06d}",
        trace_id=f"t{i}",
        decision_key=key,
        status=status,
        decision="x",
        inputs=inputs,
        tool_calls=tools,
        evidence_refs_missing=missing,
        decided_at=T0 + timedelta(days=day),
    )


def kinds(insights):
    return sorted(i.kind.value for i in insights)


def test_failure_cluster_rule_and_table_add_up() -> None:
    records = [rec(i, "k.a", S.failed, reason="wrong_tool") for i in range(5)]
    records += [rec(10 + i, "k.a", S.failed, reason="step_limit") for i in range(2)]
    records += [rec(20 + i, "k.b", S.denied) for i in range(3)]
    records += [rec(30 + i, "k.b") for i in range(10)]
    frame = runs_frame(records)
    table = failure_table(frame)
    assert int(table["count"].sum()) == int(frame["failed"].sum()) == 10
    assert set(table["reason_class"]) == {"wrong_tool", "step_limit", "unclassified"}
    (ins,) = find_run_insights(frame, rules=["failure_cluster"])
    assert ins.kind == InsightKind.failure_cluster and ins.occurrences == 5
    assert ins.support["hits_in"] == 5 and ins.support["n_in"] == 7
    assert ins.support["hits_out"] == 0 and ins.support["n_out"] == 13
    assert (
        "reason_class" in ins.support["rule"] and ins.support["spec"]["rule"] == "failure_cluster"
    )


def test_feedback_supplies_a_missing_reason() -> None:
    records = [rec(i, "k.a", S.failed) for i in range(5)]
    fb = [
        FeedbackEntry(
            id=f"fb_{i:06d}",
            trace_id=f"t{i}",
            decision_record_id=f"dr_{i:06d}",
            decision_key="k.a",
            override_kind="deny",
            override_reason_class="pii_exposed",
            signed_by="op",
            signed_at=T0,
        )
        for i in range(5)
    ]
    frame = runs_frame(records, fb)
    assert set(frame["reason_class"]) == {"pii_exposed"}


def test_gap_detected_rule() -> None:
    records = [
        rec(i, "k.a", S.failed if i < 5 else S.completed, missing=("ev:proof",)) for i in range(6)
    ]
    records += [rec(10 + i, "k.a") for i in range(10)]
    (ins,) = find_run_insights(runs_frame(records), rules=["gap_detected"])
    assert ins.occurrences == 6 and ins.support["key"] == {"ref": "ev:proof"}
    assert ins.support["rate"] == pytest.approx(5 / 6) and ins.support["baseline_rate"] == 0.0


def test_blocked_decision_rule() -> None:
    records = [rec(i, "k.a", S.blocked) for i in range(5)] + [rec(9, "k.b", S.blocked)]
    records += [rec(20 + i, "k.b") for i in range(5)]
    (ins,) = find_run_insights(runs_frame(records), rules=["blocked_decision"])
    assert ins.intent == "k.a" and ins.occurrences == 5


def test_common_detour_rule_uses_the_modal_successful_path() -> None:
    records = [rec(i, "k.a", tools=("lookup", "decide")) for i in range(8)]
    records += [
        rec(20 + i, "k.a", S.failed if i < 4 else S.completed, tools=("lookup", "lookup", "decide"))
        for i in range(5)
    ]
    frame = runs_frame(records)
    assert modal_path(frame, "k.a") == ("lookup", "decide")
    (ins,) = find_run_insights(frame, rules=["common_detour"])
    assert ins.support["key"] == {
        "decision_key": "k.a",
        "tool": "lookup",
        "modal_paths": {"k.a": ["lookup", "decide"]},  # no task ids: the key is the task
    }
    assert ins.occurrences == 5 and ins.support["rate"] == pytest.approx(0.8)


def test_over_escalation_rule() -> None:
    records = [rec(i, "k.a", S.escalated, expected="approve") for i in range(5)]
    records += [rec(10 + i, "k.a", S.escalated, expected="escalate") for i in range(5)]
    (ins,) = find_run_insights(runs_frame(records), rules=["over_escalation"])
    assert ins.kind == InsightKind.over_escalation and ins.occurrences == 5


def test_every_rule_fires_on_the_generator_and_states_its_rule() -> None:
    records, feedback = support_desk(600, 7)
    insights = find_run_insights(runs_frame(records, feedback))
    assert {i.kind for i in insights} == set(InsightKind)
    for i in insights:
        assert i.support["rule"] == RULES[i.support["spec"]["rule"]].text
        assert 0.0 <= i.confidence <= 1.0


def test_split_is_stable_and_clustering_sees_search_only() -> None:
    spec = SplitSpec(0.3)
    ids = [f"trace-{i}" for i in range(2000)]
    first = spec.assign(ids)
    assert first.equals(spec.assign(reversed(ids)).reindex(ids))
    assert 0.25 < (first == HELDOUT).mean() < 0.35
    records, feedback = support_desk(600, 7)
    frame = runs_frame(records, feedback, spec)
    for ins in find_run_insights(frame, split=spec):
        search_ids = set(frame.loc[frame["split"] == SEARCH, "record_id"])
        assert set(ins.evidence_refs) <= search_ids
        assert ins.support["split"]["discovered_on"] == SEARCH
        # the gate can recount the same spec on held-out
        held = measure(ins.support["spec"], frame[frame["split"] == HELDOUT])
        assert 0 < held.counts.n_in + held.counts.n_out <= int((frame["split"] == HELDOUT).sum())
