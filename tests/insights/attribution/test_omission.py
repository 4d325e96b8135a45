"""A failure of omission: the requester ends a run in which no agent acted with effect (no
executed code, no state-changing call), so its decisive step is where the run ended, and the
bundled attributor blames that end, not a look-up that changed nothing."""

from __future__ import annotations

from contextos_lab.insights.attribution import RunTrace, Turn
from contextos_lab.insights.attribution.default_weights import DEFAULT_WEIGHTS
from contextos_lab.insights.attribution.features import step_features
from contextos_lab.insights.attribution.fitting import PRIOR_WEIGHTS
from contextos_lab.insights.attribution.linear import LinearAttributor

FEATURE = "requester_ends_without_effect"


def _run(*, write: bool, last: str = "user") -> RunTrace:
    turns = [
        Turn(0, "user", "Hello, please move my booking 77 to a later date."),
        Turn(1, "assistant", "Of course. Let me look the booking up first.", None),
        Turn(2, "assistant", '{"booking_id": "77"}', "get_booking_details"),
        Turn(3, "tool", '{"booking_id": "77", "date": "2024-05-01"}'),
        Turn(4, "assistant", "I found it. Unfortunately I cannot change this booking today."),
        Turn(5, last, "Alright, thank you anyway. Bye."),
    ]
    if write:
        turns[2] = Turn(2, "assistant", '{"booking_id": "77"}', "update_booking_date")
    return RunTrace("omission", tuple(turns))


def test_the_feature_fires_on_the_requesters_end_of_a_run_without_effect() -> None:
    rows = step_features(_run(write=False))
    assert [r[FEATURE] for r in rows] == [0, 0, 0, 0, 0, 1]
    assert all(r[FEATURE] == 0 for r in step_features(_run(write=True)))
    # an agent speaking last is no requester ending the run
    assert all(r[FEATURE] == 0 for r in step_features(_run(write=False, last="assistant")))


def test_it_is_a_stated_prior_and_the_bundled_attributor_blames_the_end() -> None:
    assert PRIOR_WEIGHTS[FEATURE] > 0 and DEFAULT_WEIGHTS[FEATURE] > 0
    blamed = LinearAttributor(DEFAULT_WEIGHTS).attribute(_run(write=False))
    assert blamed is not None and blamed.step == 5
