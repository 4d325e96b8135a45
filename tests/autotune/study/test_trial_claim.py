"""A worker killed between `ask()` and naming its trial leaves an orphan a restart can reap
(the flake CI showed: a SIGKILLed `search` process left a RUNNING trial that counted forever)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from contextos_lab.autotune.study.trial_claim import ask_claimed, open_claims, worker_id
from contextos_lab.autotune.study.trial_count import reap_interrupted

_DIE_IN_ASK = """
import optuna, os, socket, sys
study = optuna.load_study(study_name="s", storage=sys.argv[1])
key = f"asking:{socket.gethostname()}:{os.getpid()}"
study._storage.set_study_system_attr(study._study_id, key, True)
study.ask()
os._exit(0)  # killed before the trial names its worker
"""


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _claim(study: optuna.Study, worker: str) -> None:
    study._storage.set_study_system_attr(study._study_id, f"asking:{worker}", True)


def test_ask_claimed_names_the_worker_and_closes_its_claim() -> None:
    study = optuna.create_study()
    trial = ask_claimed(study)
    assert trial.user_attrs["worker"] == worker_id()
    assert open_claims(study) == []


def test_a_worker_dead_inside_ask_leaves_an_orphan_the_next_start_reaps(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="s", storage=url)
    subprocess.run([sys.executable, "-c", _DIE_IN_ASK, url], check=True)
    (orphan,) = study.get_trials(states=(TrialState.RUNNING,))
    assert "worker" not in orphan.user_attrs and len(open_claims(study)) == 1
    assert reap_interrupted(study) == [orphan.number]
    assert study.trials[orphan.number].user_attrs["interrupted"] is True
    assert open_claims(study) == [], "the dead claim is closed once its orphans are reaped"


def test_an_unclaimed_trial_is_kept_while_a_live_or_remote_worker_may_own_it() -> None:
    here = socket.gethostname()
    for other in (f"{here}:{os.getpid()}", "another-host:1"):
        study = optuna.create_study()
        _claim(study, f"{here}:{_dead_pid()}")
        _claim(study, other)
        fresh = study.ask()
        assert reap_interrupted(study) == [], other
        assert study.trials[fresh.number].state == TrialState.RUNNING
        assert len(open_claims(study)) == 2


def test_with_no_claim_open_an_unclaimed_trial_waits_out_the_grace() -> None:
    study = optuna.create_study()
    fresh = study.ask()
    assert reap_interrupted(study) == []
    assert reap_interrupted(study, grace_s=0.0) == [fresh.number]


def test_a_claim_stays_open_when_ask_fails_after_creating_the_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ask() raised after the trial existed: the claim stays open, so once this process is
    gone (here: the claim is renamed to a dead pid) the unnamed trial is reaped at once."""
    study = optuna.create_study()
    monkeypatch.setattr(optuna.Trial, "set_user_attr", _raise)
    with pytest.raises(RuntimeError):
        ask_claimed(study)
    monkeypatch.undo()
    assert open_claims(study) == [worker_id()]
    (orphan,) = study.get_trials(states=(TrialState.RUNNING,))
    assert reap_interrupted(study) == [], "this process is alive: its trial may still be named"
    study._storage.set_study_system_attr(study._study_id, f"asking:{worker_id()}", False)
    _claim(study, f"{socket.gethostname()}:{_dead_pid()}")
    assert reap_interrupted(study) == [orphan.number]


def _raise(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("storage went away")
