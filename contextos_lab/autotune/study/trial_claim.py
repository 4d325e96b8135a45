"""Asking for a trial under a claim, so a restart can tell whose unclaimed trial is orphaned.

`study.ask()` creates the trial RUNNING and only afterwards can its worker record itself (a few
storage calls and the sampler's `before_trial` later). A worker killed in that window leaves a
RUNNING trial that names no worker: counted against the budget, never finished. Optuna cannot
create a trial with its user attrs in one call through the public API, so each worker opens an
`asking:<host:pid>` study system attr before it asks and closes it once the trial names it.
Any unclaimed trial was then created while its owner's claim was open, and when every open
claim belongs to a dead process on this host, the unclaimed trials are orphans. A claim left
open on another host cannot be judged from here: while one is open, unclaimed trials wait out
the grace period.
"""

from __future__ import annotations

import contextlib
import os
import socket

import optuna

_PREFIX = "asking:"


def worker_id() -> str:
    """`host:pid`: lets a restarted sweep tell a dead worker's trial from a live one."""
    return f"{socket.gethostname()}:{os.getpid()}"


def ask_claimed(study: optuna.Study) -> optuna.Trial:
    """`study.ask()` with this process's claim open until the trial records its worker."""
    key, storage, sid = _PREFIX + worker_id(), study._storage, study._study_id
    storage.set_study_system_attr(sid, key, True)
    trial = study.ask()
    trial.set_user_attr("worker", worker_id())
    # closed only once the trial names its worker: if ask() raised after creating a trial,
    # the open claim lets a restart reap it once this process is gone
    with contextlib.suppress(Exception):  # an unclosed claim only delays reaping
        storage.set_study_system_attr(sid, key, False)
    return trial


def open_claims(study: optuna.Study) -> list[str]:
    """Workers (`host:pid`) that were between `ask()` and naming their trial when last seen."""
    attrs = study._storage.get_study_system_attrs(study._study_id)
    return [k.removeprefix(_PREFIX) for k, v in attrs.items() if k.startswith(_PREFIX) and v]


def dead_here(worker: str) -> bool:
    """Whether `worker` ran on this host and its process is gone (a remote one is never dead)."""
    host, _, pid = worker.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and not pid_alive(int(pid))


def close_claims(study: optuna.Study, workers: list[str]) -> None:
    for w in workers:
        study._storage.set_study_system_attr(study._study_id, _PREFIX + w, False)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
