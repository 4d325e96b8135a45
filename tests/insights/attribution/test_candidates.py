"""Which turns can be blamed, and the temperature of a fit: the run's final turn is always a
candidate (an omission's decisive step is where the run ended, often the user's or a tool's
turn), mid-run user and tool turns are not; the fitted temperature comes from out-of-fold
scores, never from the scores of the runs the weights were fitted on."""

from __future__ import annotations

import numpy as np

from contextos_lab.insights.attribution import RunTrace, Turn
from contextos_lab.insights.attribution.features import STEP_FEATURES, run_signals
from contextos_lab.insights.attribution.fitting import fit_model
from contextos_lab.insights.attribution.linear import LinearAttributor, candidates, run_rows


def _chat(i: int, ends_with: str) -> RunTrace:
    turns = [
        Turn(0, "user", f"Hi, please change order {i} to the blue one."),
        Turn(1, "assistant", "Sure, let me look the order up.", None),
        Turn(2, "assistant", f'{{"order_id": "{i}"}}', "get_order_details"),
        Turn(3, "tool", f'{{"order_id": "{i}", "status": "pending"}}'),
        Turn(4, "assistant", "Your order is pending. Anything else?"),
        Turn(5, "user", "No thanks, that is all."),
    ]
    if ends_with == "tool":
        turns[5] = Turn(5, "tool", '{"status": "ok"}')
    return RunTrace(f"chat{i}", tuple(turns))


def test_the_final_turn_is_a_candidate_whoever_speaks_it() -> None:
    for ends_with in ("user", "tool"):
        run = _chat(1, ends_with)
        steps = candidates(run, run_signals(run))
        assert steps == [1, 2, 4, 5], ends_with  # mid-run user (0) and tool (3) turns are not


def test_an_annotated_final_user_turn_is_scorable() -> None:
    _, y, at = run_rows(_chat(2, "user"), 5)
    assert y.sum() == 1 and at[int(np.argmax(y))] == 5
    model = LinearAttributor({"role_user": 5.0})
    top = model.attribute(_chat(2, "user"))
    assert top is not None and top.step == 5 and top.agent == "user"


def test_fit_model_temperature_comes_from_out_of_fold_scores() -> None:
    """A feature that names the answer in each run's own noise fits in sample perfectly, so an
    in-sample temperature collapses toward its lower bound; held-out scores keep it warm."""
    rng = np.random.default_rng(0)
    parts = []
    for _ in range(30):
        x = rng.random((6, len(STEP_FEATURES)))
        y = np.zeros(6, dtype=int)
        y[int(rng.integers(6))] = 1
        parts.append((x, y, list(range(6))))
    weights, temperature = fit_model(parts, range(len(parts)))
    assert set(weights) and temperature > 1.0
