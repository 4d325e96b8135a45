"""The kit's journal backend: flushed per append (visible to other processes), no fsync each."""

from __future__ import annotations

import os
from pathlib import Path

import optuna
import pytest

from contextos_lab.autotune.study.storage import _FlushedJournalFileBackend, open_storage


def test_journal_urls_use_the_flushed_backend_and_never_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fsync(fd: int) -> None:
        raise AssertionError("fsync per append")

    monkeypatch.setattr(os, "fsync", no_fsync)
    path = tmp_path / "study.log"
    writer = open_storage(str(path))
    assert isinstance(writer._backend, _FlushedJournalFileBackend)  # type: ignore[attr-defined]
    study = optuna.create_study(study_name="s", storage=writer, directions=["minimize"])
    for x in (3.0, 1.0, 2.0):
        trial = study.ask()
        trial.suggest_float("x", 0.0, 5.0)
        trial.set_user_attr("note", {"x": x})
        trial.set_constraint("c", x - 2.0)
        study.tell(trial, x)
    # a second storage on the same file (as another worker process would open it) sees it all
    reader = optuna.load_study(study_name="s", storage=open_storage(f"journal:///{path}"))
    trials = reader.get_trials()
    assert [t.value for t in trials] == [3.0, 1.0, 2.0]
    assert [t.user_attrs["note"]["x"] for t in trials] == [3.0, 1.0, 2.0]
    assert [t.constraints["c"] for t in trials] == [1.0, -1.0, 0.0]
    assert path.read_bytes().endswith(b"\n")
    assert not Path(str(path) + ".lock").exists()  # the lock is released after each append
