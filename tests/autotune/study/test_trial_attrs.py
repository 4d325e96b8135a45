"""`study.trial_attrs.record` stores exactly what `set_user_attr` / `set_constraint` store, on every
storage kind (RDB in one commit, journal and memory through the public calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pytest

from contextos_lab.autotune.study import trial_attrs
from contextos_lab.autotune.study.storage import open_storage

USER: dict[str, Any] = {"scores": {"utility": 0.5, "latency": 120.0}, "run": {"n": [1, 2]}}
CONSTRAINTS = {"floor_policy": -0.25, "delta_utility": 0.0}


def _finished(storage: optuna.storages.BaseStorage, batched: bool) -> optuna.trial.FrozenTrial:
    study = optuna.create_study(storage=storage, directions=["maximize"])
    trial = study.ask()
    if batched:
        trial_attrs.record(trial, USER, CONSTRAINTS)
        trial_attrs.record(trial, {"spend": 1}, {"floor_policy": 9.0})  # kept, as set_constraint
    else:
        for key, value in USER.items():
            trial.set_user_attr(key, value)
        for name, value in CONSTRAINTS.items():
            trial.set_constraint(name, value)
        trial.set_user_attr("spend", 1)
    assert trial.user_attrs == {**USER, "spend": 1}
    study.tell(trial, [1.0])
    return study.trials[-1]


def _urls(tmp_path: Path) -> list[str]:
    return [f"sqlite:///{tmp_path / 's.db'}", str(tmp_path / "j.log"), "memory"]


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["sqlite", "journal", "memory"])
def test_record_matches_public_calls(tmp_path: Path, kind: int) -> None:
    url = _urls(tmp_path)[kind]
    storage = open_storage(url)
    one, many = _finished(storage, batched=True), _finished(storage, batched=False)
    assert one.user_attrs == many.user_attrs
    assert one.system_attrs == many.system_attrs
    assert one.system_attrs["constraints:floor_policy"] == -0.25


@pytest.mark.postgres
def test_record_on_postgresql(postgres_db: str) -> None:
    storage = open_storage(postgres_db)
    one, many = _finished(storage, batched=True), _finished(storage, batched=False)
    assert one.user_attrs == many.user_attrs
    assert one.system_attrs == many.system_attrs


def test_record_refuses_nan_and_finished_trials(tmp_path: Path) -> None:
    study = optuna.create_study(storage=open_storage(_urls(tmp_path)[0]))
    trial = study.ask()
    with pytest.raises(ValueError, match="NaN"):
        trial_attrs.record(trial, {}, {"floor": float("nan")})
    study.tell(trial, 1.0)
    with pytest.raises(RuntimeError):  # Optuna's UpdateFinishedTrialError
        trial_attrs.record(trial, {"late": 1})
