"""Write a trial's user attributes and constraints in one storage transaction.

Why not `trial.set_user_attr` / `trial.set_constraint` one by one: on a server database each
is its own transaction, and `set_constraint` first re-reads the whole running trial (to warn on
a key already set), so the eight attributes and constraints a finished trial records cost ~34
statements in 8 transactions, a third of the kit's per-trial round trips on PostgreSQL
(benchmarks/worker_scaling.py). Optuna has no batch call, so for its RDBStorage we run the very
upsert its `set_trial_user_attr` / `set_trial_system_attr` run (`_set_trial_attr_without_commit`,
Optuna pinned in constraints.txt) inside one session: same rows, same JSON, same "trial already
finished" check, one commit. Other storages (journal, memory) get the public calls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import optuna
from optuna.storages import BaseStorage, RDBStorage

#: Optuna 5 stores `trial.set_constraint(name, v)` as the system attribute `constraints:<name>`
#: (optuna.study._constrained_optimization._CONSTRAINTS_KEY); samplers and the dashboard read it.
CONSTRAINT_PREFIX = "constraints:"


def _rdb_backend(storage: BaseStorage) -> RDBStorage | None:
    backend = getattr(storage, "_backend", storage)  # Optuna wraps RDBStorage in _CachedStorage
    return backend if isinstance(backend, RDBStorage) else None


def _constraint_value(name: str, value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"constraint {name!r}: {value!r} is not a float") from None
    if math.isnan(out):
        raise ValueError(f"constraint {name!r} is NaN")
    return out


def record(
    trial: optuna.Trial,
    user_attrs: Mapping[str, Any],
    constraints: Mapping[str, float] | None = None,
) -> None:
    """Set `user_attrs` and `constraints` on a running trial, in one commit where possible.

    Like `set_constraint`, a constraint already set on this trial is kept (not overwritten).
    """
    known = trial._cached_frozen_trial.system_attrs
    system = {
        f"{CONSTRAINT_PREFIX}{name}": _constraint_value(name, value)
        for name, value in (constraints or {}).items()
        if f"{CONSTRAINT_PREFIX}{name}" not in known
    }
    storage = trial.storage
    backend = _rdb_backend(storage)
    if backend is None:
        for key, value in user_attrs.items():
            storage.set_trial_user_attr(trial._trial_id, key, value)
        for key, value in system.items():
            storage.set_trial_system_attr(trial._trial_id, key, value)
    else:
        from optuna.storages._rdb import models
        from optuna.storages._rdb.storage import _create_scoped_session

        with _create_scoped_session(backend.scoped_session, True) as session:
            for key, value in user_attrs.items():
                backend._set_trial_attr_without_commit(
                    session, models.TrialUserAttributeModel, trial._trial_id, key, value
                )
            for key, value in system.items():
                backend._set_trial_attr_without_commit(
                    session, models.TrialSystemAttributeModel, trial._trial_id, key, value
                )
    trial._cached_frozen_trial.user_attrs.update(user_attrs)
    trial._cached_frozen_trial.system_attrs.update(system)
