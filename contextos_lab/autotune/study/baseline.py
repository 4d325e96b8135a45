"""The baseline trial: run once, first, awaited by concurrent processes, scores recorded."""

from __future__ import annotations

import time

import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.study.trial_claim import ask_claimed
from contextos_lab.autotune.study.trial_count import _uncounted
from contextos_lab.autotune.study.trial_run import (
    FAIL_CODE,
    close_duplicate_baseline,
    run_one_trial,
)
from contextos_lab.errors import EXIT_HARNESS, EXIT_PROTOCOL, ContextosError


class HarnessUnreachable(ContextosError, RuntimeError):
    """The baseline trial could not run: no study trial should start against this harness."""

    exit_code = EXIT_HARNESS


class HarnessProtocolError(HarnessUnreachable):
    """The baseline failed because the harness broke the protocol (malformed output, an unknown
    or repeated case id, a wrong type): deterministic, so a retry cannot help (exit 9)."""

    exit_code = EXIT_PROTOCOL


def baseline_failed(trial: optuna.trial.FrozenTrial | None, number: int) -> HarnessUnreachable:
    """The exception for a failed baseline (None: it fell past the budget): a protocol error
    when the trial recorded the protocol's exit status (FAIL_CODE)."""
    reason = trial.user_attrs.get("fail_reason") if trial is not None else "over budget"
    message = f"baseline trial {number} failed: {reason}"
    if trial is not None and trial.user_attrs.get(FAIL_CODE) == EXIT_PROTOCOL:
        return HarnessProtocolError(message)
    return HarnessUnreachable(message)


def ensure_baseline(
    ctx: RunContext, study: optuna.Study, budget: int | None = None, *, poll_s: float = 0.2
) -> dict[str, float]:
    """Run the baseline tuple as the study's first trial (once) and return its scores.

    It doubles as the reachability check: if the harness cannot score its own baseline, the
    run stops here with the reason, before any search trial. When several processes start
    the study together, one runs the baseline and the others wait for its scores.
    """
    found = _baseline_scores(study)
    if found is not None:
        return found
    waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING, TrialState.RUNNING))
    if not any(t.user_attrs.get("is_baseline") for t in waiting):
        study.enqueue_trial(ctx.space.baseline_params(), user_attrs={"is_baseline": True})
    trial = ask_claimed(study)
    if trial.user_attrs.get("is_baseline") and _earlier_baseline(study, trial.number):
        # two processes both saw no baseline queued and both enqueued one (seen on PostgreSQL
        # with three `search` processes): the later one closes unrun and uncounted
        close_duplicate_baseline(study, trial)
        scores = _wait_for_baseline(study, poll_s)
        run_one_trial(ctx, study, scores, budget=budget)
        return scores
    if not trial.user_attrs.get("is_baseline"):
        # another process took the baseline: wait for it, then run the trial we were given
        scores = _wait_for_baseline(study, poll_s)
        run_one_trial(ctx, study, scores, budget=budget, trial=trial)
        return scores
    frozen = run_one_trial(ctx, study, baseline=None, trial=trial)
    if frozen is None or frozen.state != TrialState.COMPLETE:
        raise baseline_failed(frozen, trial.number)
    scores = dict(frozen.user_attrs["scores"])
    study.set_user_attr("baseline_scores", scores)
    study.set_user_attr("baseline_trial", frozen.number)
    return scores


def _earlier_baseline(study: optuna.Study, number: int) -> bool:
    live = (TrialState.WAITING, TrialState.RUNNING, TrialState.COMPLETE)
    return any(
        t.number < number and t.user_attrs.get("is_baseline") and not _uncounted(t)
        for t in study.get_trials(deepcopy=False, states=live)
    )


def _baseline_scores(study: optuna.Study) -> dict[str, float] | None:
    if "baseline_scores" in study.user_attrs:
        return dict(study.user_attrs["baseline_scores"])
    done = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if t.user_attrs.get("is_baseline")
    ]
    if done:  # killed between finishing the baseline and recording its scores
        study.set_user_attr("baseline_scores", dict(done[0].user_attrs["scores"]))
        study.set_user_attr("baseline_trial", done[0].number)
        return dict(done[0].user_attrs["scores"])
    return None


def _wait_for_baseline(study: optuna.Study, poll_s: float) -> dict[str, float]:
    while True:
        found = _baseline_scores(study)
        if found is not None:
            return found
        failed = [
            t
            for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))
            if t.user_attrs.get("is_baseline") and not t.user_attrs.get("duplicate_baseline")
        ]
        if failed:
            raise baseline_failed(failed[0], failed[0].number)
        time.sleep(poll_s)
