"""The one lifecycle machine: legal paths only, approver on release, both states named."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.schemas import IllegalTransition, LifecycleStatus, StrategyProposal, advance
from contextos_lab.schemas.lifecycle import TERMINAL, TRANSITIONS, check_transition

S = LifecycleStatus
STATES = list(LifecycleStatus)


def _proposal() -> StrategyProposal:
    return StrategyProposal(
        proposal_id="sp_b03",
        insight_id="ins_a17",
        proposal_class="tighten_evidence_requirement",
        patch={
            "target": "policy_bundle",
            "target_id": "POLICY_RETURNS_V4",
            "op": "modify",
            "body": {},
        },
        rationale="r",
        expected_impact={"runs_affected_per_day": 1, "expected_decision_change_rate": 0.012},
    )


def test_seed_paths_are_legal() -> None:
    p = _proposal()
    p = advance(p, "reviewed", actor="op")
    p = advance(p, "approved", actor="lead", approver_id="lead")
    p = advance(p, "released", actor="lead", approver_id="lead")
    p = advance(p, "retired", actor="lead", rationale="superseded by v5 policy")
    assert p.status == S.retired and len(p.history) == 4
    q = advance(advance(_proposal(), "in_replay", actor="gate"), "ready_for_review", actor="gate")
    q = advance(advance(q, "reviewed", actor="op"), "rejected", actor="op", rationale="noise")
    assert q.status == S.rejected


def test_illegal_transition_names_both_states() -> None:
    with pytest.raises(IllegalTransition, match="proposed → released"):
        advance(_proposal(), "released", actor="x", approver_id="y")


def test_release_requires_an_approver() -> None:
    p = advance(
        advance(_proposal(), "reviewed", actor="op"), "approved", actor="a", approver_id="a"
    )
    with pytest.raises(IllegalTransition, match="approver id is required"):
        advance(p, "released", actor="a")
    with pytest.raises(IllegalTransition, match="approver id is required"):
        advance(p, "released", actor="a", approver_id="   ")


@given(st.lists(st.sampled_from(STATES), max_size=12))
def test_any_walk_stays_on_the_graph(targets: list[LifecycleStatus]) -> None:
    """Property: whatever sequence is attempted, only graph edges are ever taken."""
    p = _proposal()
    for target in targets:
        before = p.status
        try:
            p = advance(p, target, actor="x", approver_id="appr", rationale="why")
        except IllegalTransition as exc:
            assert target not in TRANSITIONS[before]
            assert before.value in str(exc) and target.value in str(exc)
        else:
            assert target in TRANSITIONS[before]
    # The history replays to the final state.
    state = S.proposed
    for move in p.history:
        assert move.from_status == state
        check_transition(
            state, move.to_status, approver_id=move.approver_id, rationale=move.rationale
        )
        state = move.to_status
    assert state == p.status


@given(st.sampled_from(sorted(TERMINAL)), st.sampled_from(STATES))
def test_terminal_states_are_final(terminal: LifecycleStatus, target: LifecycleStatus) -> None:
    with pytest.raises(IllegalTransition):
        check_transition(terminal, target, approver_id="a", rationale="r")
