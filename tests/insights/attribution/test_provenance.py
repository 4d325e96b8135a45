"""Provenance signals: who first stated the values the run ended on, whose claim was disputed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.insights.attribution.default_weights import DEFAULT_WEIGHTS
from contextos_lab.insights.attribution.features import step_features
from contextos_lab.insights.attribution.linear import LinearAttributor
from contextos_lab.insights.attribution.provenance import (
    contradicted_soon_after,
    final_answer_share,
    values,
)
from contextos_lab.insights.attribution.turns import RunTrace, Turn


def _run() -> RunTrace:
    """A group chat whose wrong final answer was first stated by the second expert (step 3),
    which a checker disputes right after; step 1 is the lead's harmless opening."""
    return RunTrace(
        "r",
        (
            Turn(0, "Lead_Expert", "The task: name the largest moon of Planet Nine."),
            Turn(1, "Lead_Expert", "I will start from the 2019 and 2021 surveys of the sky."),
            Turn(2, "Lead_Expert", "Our astronomer knows the sky best, so over to the expert."),
            Turn(3, "Sky_Expert", "The largest moon of Planet Nine is Vesper Major."),
            Turn(4, "Check_Expert", "That looks incorrect: there is a discrepancy with the data."),
            Turn(5, "Sky_Expert", "I stand by it: the largest is Vesper Major."),
            Turn(6, "Check_Expert", "The final answer: Vesper Major. TERMINATE"),
        ),
    )


def test_values_skip_code_blocks_and_normalise() -> None:
    text = 'It is **Blue Lagoon**, 1,250 m, says "the guide". ```x = 99```'
    assert values(text) == {"blue lagoon", "1250", "the guide"}  # "It": under three letters


def test_the_turn_that_first_stated_the_final_values_gets_the_share() -> None:
    run = _run()
    acting = [t.speaker != "Computer_terminal" for t in run.turns]
    share = final_answer_share(run.turns, acting, final=6)
    # the final turn's values beyond the task statement ("The", Planet Nine are in it): Vesper
    # Major (first stated at step 3) and TERMINATE (first stated by the final turn itself)
    assert share[3] == max(share[:6]) and share[3] > 0
    assert share[0] == share[1] == share[2] == share[4] == share[5] == 0.0


def test_a_claim_another_speaker_calls_wrong_is_marked() -> None:
    run = _run()
    disputed = contradicted_soon_after(run.turns, [True] * len(run.turns))
    # step 4 disputes: the three steps before it by other speakers are marked; the checker's
    # own turn is not, and nothing after step 4 disputes anything
    assert [i for i, d in enumerate(disputed) if d] == [1, 2, 3]


def test_step_features_carry_the_provenance_signals() -> None:
    rows = step_features(_run())
    assert rows[3]["contradicted_soon_after"] == 1.0
    assert rows[3]["final_answer_share"] == max(r["final_answer_share"] for r in rows[:6])
    assert rows[5]["contradicted_soon_after"] == 0.0


def test_the_default_attributor_blames_the_turn_that_introduced_the_disputed_answer() -> None:
    # Before these signals the default weights blamed the task statement (Lead_Expert, step 0).
    a = LinearAttributor(DEFAULT_WEIGHTS).attribute(_run())
    assert a is not None and (a.agent, a.step) == ("Sky_Expert", 3)
    assert {"final_answer_share", "contradicted_soon_after"} <= dict(a.signals).keys()


@given(st.lists(st.text(max_size=80), min_size=1, max_size=8))
def test_shares_are_bounded_and_sum_to_at_most_one(texts: list[str]) -> None:
    turns = [Turn(i, f"S{i % 3}", t) for i, t in enumerate(texts)]
    share = final_answer_share(turns, [True] * len(turns), final=len(turns) - 1)
    assert all(0.0 <= s <= 1.0 for s in share) and sum(share) <= 1.0 + 1e-9
