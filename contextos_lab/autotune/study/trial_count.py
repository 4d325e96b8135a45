"""Which trials count toward a study's budget, and reaping trials whose worker on this host died."""

from __future__ import annotations

import contextlib
import datetime
import logging

import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.study.trial_claim import close_claims, dead_here, open_claims

log = logging.getLogger(__name__)

COUNTED_STATES = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED, TrialState.RUNNING)


def _uncounted(t: optuna.trial.FrozenTrial) -> bool:
    return bool(
        t.user_attrs.get("interrupted")
        or t.user_attrs.get("over_budget")
        or t.user_attrs.get("duplicate_baseline")
    )


def counted_trials(study: optuna.Study) -> int:
    """Trials that count toward the budget: everything started except interrupted ones."""
    trials = study.get_trials(deepcopy=False, states=COUNTED_STATES)
    return sum(1 for t in trials if not _uncounted(t))


def finished_trials(study: optuna.Study) -> int:
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
    return sum(1 for t in trials if not _uncounted(t))


def _within_budget(study: optuna.Study, number: int, budget: int) -> bool:
    """Whether trial `number` is among the first `budget` counted trials of the study."""
    if number < budget:
        # Numbers are 0, 1, 2, ... assigned atomically, so at most number + 1 trials (counted
        # or not) are numbered <= it: within budget without reading every trial back.
        return True
    states = (*COUNTED_STATES, TrialState.WAITING)
    trials = study.get_trials(deepcopy=False, states=states)
    return sum(1 for t in trials if t.number <= number and not _uncounted(t)) <= budget


# A trial is RUNNING from `study.ask()` until its worker records itself (trial_claim). With no
# worker named, the trial is an orphan only when every claim open at the time is a dead process
# on this host; otherwise (a live or remote claim: reaping would fail a live trial, seen in CI
# with three `search` processes on PostgreSQL) only once it is older than this.
UNCLAIMED_GRACE_S = 300.0


def reap_interrupted(study: optuna.Study, *, grace_s: float = UNCLAIMED_GRACE_S) -> list[int]:
    """Mark RUNNING trials whose worker process on this host is gone as interrupted FAILs."""
    storage = study._storage
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    # read after the trials: an unclaimed trial's owner opened its claim before the trial
    # existed, so it is either still listed open here or has named itself (re-read below)
    claims = open_claims(study)
    orphans_known = bool(claims) and all(dead_here(w) for w in claims)
    reaped = []
    now = datetime.datetime.now()  # Optuna stamps datetime_start with naive local time
    for t in running:
        worker = t.user_attrs.get("worker")
        if worker is None:
            t = storage.get_trial(t._trial_id)
            worker = t.user_attrs.get("worker")
        if worker is not None:
            if t.state != TrialState.RUNNING or not dead_here(str(worker)):
                continue
        elif not orphans_known and _younger(t, now, grace_s):
            continue
        reason = f"interrupted: worker {worker or '(unknown)'} died before finishing the trial"
        with contextlib.suppress(optuna.exceptions.UpdateFinishedTrialError):
            storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            storage.set_trial_user_attr(t._trial_id, "fail_reason", reason)
            storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
            reaped.append(t.number)
    unnamed = any("worker" not in t.user_attrs for t in running)
    if orphans_known or not unnamed:  # no orphan left for this host's dead claims to explain
        close_claims(study, [w for w in claims if dead_here(w)])
    if reaped:
        log.warning("study %s: marked interrupted trials %s as FAIL", study.study_name, reaped)
    return reaped


def _younger(t: optuna.trial.FrozenTrial, now: datetime.datetime, grace_s: float) -> bool:
    start = t.datetime_start
    return start is not None and (now - start).total_seconds() < grace_s
