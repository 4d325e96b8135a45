"""Calibration on a few labelled runs: the prior when there are none, a move toward what the
runs show when they agree, and no move past the evidence."""

from __future__ import annotations

import numpy as np

from contextos_lab.insights.attribution import RunTrace, Turn
from contextos_lab.insights.attribution.calibrate import (
    KEEP_RANKING,
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
    """Runs that all contradict the prior let it move (a finite strength: the calibration
    found more of their steps without each than the prior's ranking), so it follows them;
    runs that agree with it keep its ranking (the choice is made on the labelled runs
    themselves, nothing else)."""
    runs = [_run(i) for i in range(6)]
    parts = [run_rows(r, 1) for r in runs]
    fit, weak = calibrate_chosen(parts, PRIOR)
    assert weak in STRENGTHS
    assert LinearAttributor(fit.weights).attribute(runs[0]).step == 1
    agree, _ = calibrate_chosen([run_rows(r, 0) for r in runs], PRIOR)
    assert LinearAttributor(agree.weights).attribute(runs[0]).step == 0
    assert choose_strength(parts[:1], PRIOR) == KEEP_RANKING  # one run: nothing to check


def _two_agents(i: int) -> RunTrace:
    """A system where Writer is always decisive but no generic feature says so: Finder and
    Writer say the same kind of thing once each, in an order that alternates run by run."""
    said = (
        Turn(0, "Finder", f"Here are the {i + 3} records I looked up."),
        Turn(0, "Writer", f"Here are the {i + 4} records I wrote down."),
    )
    first, second = said if i % 2 else said[::-1]
    return RunTrace(
        f"s{i}",
        (
            Turn(0, "Lead", f"Task {i}: collect the records."),
            Turn(1, first.speaker, first.content),
            Turn(2, second.speaker, second.content),
            Turn(3, "Lead", "Thanks, done."),
        ),
    )  # fmt: skip


def _writer_step(run: RunTrace) -> int:
    return next(t.index for t in run.turns if t.speaker == "Writer")


def test_ten_labelled_runs_teach_which_agent_of_this_system_is_decisive() -> None:
    """Learnt from the runs' own speakers (a per-system feature), checked on unseen runs: the
    generic weights alone cannot tell Writer from Finder, so the old calibration could not."""
    labelled, unseen = [_two_agents(i) for i in range(10)], [_two_agents(i) for i in range(10, 20)]
    prior_model = LinearAttributor(PRIOR)
    assert sum(prior_model.attribute(r).step == _writer_step(r) for r in unseen) == 0
    fit = calibrate(labelled, [_writer_step(r) for r in labelled], PRIOR)
    assert fit.weights["speaker:writer"] > 0
    model = LinearAttributor(fit.weights, temperature=fit.temperature)
    found = [model.attribute(r) for r in unseen]
    assert [a.step for a in found] == [_writer_step(r) for r in unseen]
    assert {a.agent for a in found} == {"Writer"}


def test_noisy_labels_leave_the_prior_ranking_alone() -> None:
    """A prior that is right on this system and labels of which 4 in 10 are noise (each
    blaming another turn): no move beats the prior on leave-one-out, so its ranking is kept on
    unseen runs (only its scale may change): calibration does not wreck what the prior got
    right."""
    labelled, unseen = [_run(i) for i in range(10)], [_run(i) for i in range(10, 16)]
    noisy = [0, 1, 0, 2, 0, 3, 0, 0, 1, 0]
    fit = calibrate(labelled, noisy, PRIOR)
    prior_model, model = LinearAttributor(PRIOR), LinearAttributor(fit.weights)
    assert [model.attribute(r).step for r in unseen] == [
        prior_model.attribute(r).step for r in unseen
    ]
    assert choose_strength(
        [run_rows(r, s) for r, s in zip(labelled, noisy, strict=True)], PRIOR
    ) == (KEEP_RANKING)


def test_held_out_folds_bound_the_fits_on_many_labelled_runs(monkeypatch) -> None:
    """The printed check refits the whole calibration (its own leave-one-out choice of strength
    included) once per held-out part: one part per run made `calibrate` on tau-bench's 116
    runs take most of an hour. In folds, one calibration per fold, every run held out once."""
    import contextos_lab.insights.attribution.calibrate as cal

    sizes: list[int] = []
    real = cal.calibrate_chosen
    monkeypatch.setattr(
        cal, "calibrate_chosen", lambda parts, *a: sizes.append(len(parts)) or real(parts, *a)
    )
    runs = [_run(i) for i in range(12)]
    out = leave_one_out(runs, [1] * 12, PRIOR, folds=3)
    assert sizes == [8, 8, 8] and [a.step for a in out] == [1] * 12
    assert cal.check_folds(20) is None and cal.check_folds(116) == 10  # 5-20 runs: one each
