"""Which trials count toward a study's budget, and reaping trials whose worker on this host died."""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import socket

import optuna
from optuna.trial import TrialState

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


# A trial is RUNNING from `study.ask()` until its worker records itself a few storage calls
# later; another process reaping in that window would fail a live trial (seen in CI with
# three `search` processes on PostgreSQL). An unclaimed trial is only reaped once it is older.
UNCLAIMED_GRACE_S = 300.0


def reap_interrupted(study: optuna.Study, *, grace_s: float = UNCLAIMED_GRACE_S) -> list[int]:
    """Mark RUNNING trials whose worker process on this host is gone as interrupted FAILs.

    A trial with no recorded worker is reaped only when it started more than `grace_s` ago.
    """
    host = socket.gethostname()
    storage = study._storage
    reaped = []
    now = datetime.datetime.now()  # Optuna stamps datetime_start with naive local time
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = t.user_attrs.get("worker")
        if worker is not None:
            w_host, _, pid = str(worker).rpartition(":")
            if w_host != host or _pid_alive(int(pid)):
                continue
        elif t.datetime_start is not None and (now - t.datetime_start).total_seconds() < grace_s:
            continue
        reason = f"interrupted: worker {worker or '(unknown)'} died before finishing the trial"
        with contextlib.suppress(optuna.exceptions.UpdateFinishedTrialError):
            storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            storage.set_trial_user_attr(t._trial_id, "fail_reason", reason)
            storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
            reaped.append(t.number)
    if reaped:
        log.warning("study %s: marked interrupted trials %s as FAIL", study.study_name, reaped)
    return reaped


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
