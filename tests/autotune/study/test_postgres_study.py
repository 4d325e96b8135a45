"""Separate `contextos-lab search` processes on one study on a real PostgreSQL server (started
by tests/conftest.py): one budget, no finished trial lost when a worker is killed, and the gate
reads the finished study afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.study.trial_count import counted_trials
from contextos_lab.gate.run_gate import run_gate
from tests.autotune.conftest import toy_spec_dict
from tests.gate.gate_toy import write_project

pytestmark = pytest.mark.postgres
REPO = Path(__file__).resolve().parents[3]


def _user_url(sqlalchemy_url: str) -> str:
    """The URL as users type it (`postgresql://`, no driver): the kit must map it to psycopg."""
    return sqlalchemy_url.replace("postgresql+psycopg://", "postgresql://")


def _search(spec: Path, out: Path, url: str, budget: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "contextos_lab.cli", "search", str(spec), "--out", str(out),
           "--n-trials", str(budget), "--storage", url, "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]


def _spec(case_dir: Path, **overrides: Any) -> Path:
    path = case_dir / "run.yaml"
    path.write_text(yaml.safe_dump(toy_spec_dict(**overrides)))
    return path


def _complete(url: str, name: str = "toy_run") -> dict[int, tuple[Any, Any]]:
    study = optuna.load_study(study_name=name, storage=open_storage(url))
    return {t.number: (t.params, t.values) for t in study.get_trials(states=(TrialState.COMPLETE,))}


def test_one_search_process_runs_its_budget_on_postgresql(case_dir: Path, postgres_db: str) -> None:
    url, budget = _user_url(postgres_db), 6
    _finish(_search(_spec(case_dir), case_dir / "out", url, budget))
    study = optuna.load_study(study_name="toy_run", storage=open_storage(url))
    assert counted_trials(study) == budget
    assert len(_complete(url)) == budget


def test_three_search_processes_spend_one_budget(case_dir: Path, postgres_db: str) -> None:
    url, budget = _user_url(postgres_db), 15
    spec = _spec(case_dir, harness_kwargs={"delay": 0.1})
    procs = [_search(spec, case_dir / f"out{i}", url, budget) for i in range(3)]
    for p in procs:
        _finish(p)
    study = optuna.load_study(study_name="toy_run", storage=open_storage(url))
    assert counted_trials(study) == budget
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(complete) == budget
    assert sum(bool(t.user_attrs.get("is_baseline")) for t in complete) == 1
    assert len({t.user_attrs["worker"] for t in complete}) >= 2, "work was shared"


def test_killed_worker_loses_nothing_and_a_restart_completes_the_budget(
    case_dir: Path, postgres_db: str
) -> None:
    url, budget = _user_url(postgres_db), 14
    spec = _spec(case_dir, harness_kwargs={"delay": 0.2})
    victim = _search(spec, case_dir / "a", url, budget)
    survivor = _search(spec, case_dir / "b", url, budget)
    deadline, seen = time.time() + 120, {}
    while time.time() < deadline and len(seen) < 4:
        time.sleep(0.2)
        try:
            seen = _complete(url)
        except KeyError:  # study not created yet
            continue
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert len(seen) >= 4, "both workers should have started trials"
    _finish(survivor)
    _finish(_search(spec, case_dir / "c", url, budget))  # reaps the dead worker's trial
    after = _complete(url)
    assert all(after[n] == v for n, v in seen.items()), "a finished trial was lost or changed"
    study = optuna.load_study(study_name="toy_run", storage=open_storage(url))
    assert counted_trials(study) == budget
    assert len(after) == budget
    assert all(t.state == TrialState.FAIL for t in study.trials if t.user_attrs.get("interrupted"))


def test_gate_reads_a_study_two_processes_ran(tmp_path: Path, postgres_db: str) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    url = _user_url(postgres_db)
    for p in [_search(spec, tmp_path / f"out{i}", url, 10) for i in range(2)]:
        _finish(p)
    out = tmp_path / "gate"
    result = run_gate(spec, storage=url, out_dir=out, ledger_file=tmp_path / "l.jsonl", n_boot=300)
    assert (out / "gate.json").is_file()
    study = optuna.load_study(study_name=result.run.study, storage=open_storage(url))
    tried = [t.params for t in study.get_trials(states=(TrialState.COMPLETE,))]
    assert result.run.decisions, "the gate judged candidates from the PostgreSQL study"
    for d in result.run.decisions:
        assert result.run.candidate(d.candidate_id).params in tried
    # parallel workers explore in their own order, but a smaller top_k still promotes
    assert "promote" in {d.verdict for d in result.run.decisions}
