"""Calibration on a few labelled runs: the prior when there are none, a move toward what the
runs show when they agree, and no move past the evidence."""

from __future__ import annotations

import numpy as np

from contextos_lab.insights.attribution import RunTrace, Turn
from contextos_lab.insights.attribution.calibrate import (
    STRENGTHS,
    calibrate,
    calibrate_chosen,
    choose_strength,
    leave_one_out,
)
from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.linear import LinearAttributor, run_rows

PRIOR = {"first_turn": 1.5, "position": -0.5, "has_code": 0.4}


def _run(i: int) -> RunTrace:
    return RunTrace(
        f"r{i}",
        (
            Turn(0, "Planner_Expert", f"Task {i}: find the year the club was founded."),
            Turn(1, "Search_Expert", f"I searched and found {1900 + i}, it is manual data."),
            Turn(2, "Checker_Expert", "I verified the year; it looks right."),
            Turn(3, "Planner_Expert", f"The answer is {1900 + i}. TERMINATE"),
        ),
    )


def test_no_runs_gives_the_prior_divided_by_its_temperature() -> None:
    fit = calibrate([], [], PRIOR, prior_temperature=2.0)
    assert fit.runs == fit.used_runs == 0
    assert fit.weights["first_turn"] == 0.75 and fit.weights["has_code"] == 0.2
    assert set(fit.weights) == set(STEP_FEATURES)


def test_a_few_runs_that_agree_move_the_ranking_toward_them() -> None:
    runs = [_run(i) for i in range(8)]
    prior_model = LinearAttributor(PRIOR)
    assert all(prior_model.attribute(r).step == 0 for r in runs)  # the prior blames the task
    fit = calibrate(runs, [1] * 8, PRIOR)
    assert fit.used_runs == 8
    calibrated = LinearAttributor(fit.weights, temperature=fit.temperature)
    assert all(calibrated.attribute(r).step == 1 for r in runs)
    assert fit.weights["first_turn"] < PRIOR["first_turn"]
    # what the runs say nothing about stays where the prior put it
    assert fit.weights["role_user"] == 0.0
    loo = leave_one_out(runs, [1] * 8, PRIOR)
    assert [a.step for a in loo] == [1] * 8


def test_the_prior_holds_against_one_contrary_run() -> None:
    runs = [_run(i) for i in range(6)]
    strong = {"first_turn": 6.0}
    fit = calibrate(runs[:1], [2], strong)  # one run says the checker did it
    model = LinearAttributor(fit.weights)
    assert [model.attribute(r).step for r in runs] == [0] * 6
    assert np.isfinite(list(fit.weights.values())).all()


def test_the_prior_strength_is_chosen_by_leave_one_out_on_the_labelled_runs() -> None:
    """Runs that all contradict the prior pick a weak prior, so the calibration follows them;
    runs that agree with it keep its ranking (the choice is made on the labelled runs
    themselves, nothing else)."""
    runs = [_run(i) for i in range(6)]
    parts = [run_rows(r, 1) for r in runs]
    fit, weak = calibrate_chosen(parts, PRIOR)
    assert weak < STRENGTHS[-1]
    assert LinearAttributor(fit.weights).attribute(runs[0]).step == 1
    agree, _ = calibrate_chosen([run_rows(r, 0) for r in runs], PRIOR)
    assert LinearAttributor(agree.weights).attribute(runs[0]).step == 0
    assert choose_strength(parts[:1], PRIOR) == STRENGTHS[-1]  # one run: nothing to check
