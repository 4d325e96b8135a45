"""Separate `contextos-lab search` processes on one study on a real PostgreSQL server (started
by tests/conftest.py): one budget, no finished trial lost when a worker is killed, and the gate
reads the finished study afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from contextos_lab.autotune.study import counted_trials, open_storage
from contextos_lab.gate.run_gate import run_gate
from tests.autotune.conftest import toy_spec_dict
from tests.gate.gate_toy import write_project

pytestmark = pytest.mark.postgres
REPO = Path(__file__).resolve().parents[2]


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


def test_gate_reads_a_postgresql_study(tmp_path: Path, postgres_db: str) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    url = _user_url(postgres_db)
    _finish(_search(spec, tmp_path / "out", url, 10))
    out = tmp_path / "gate"
    result = run_gate(spec, storage=url, out_dir=out, ledger_file=tmp_path / "l.jsonl", n_boot=300)
    assert (out / "gate.json").is_file()
    verdicts = {
        result.run.candidate(d.candidate_id).params["top_k"]: d.verdict
        for d in result.run.decisions
    }
    assert verdicts.get(1) == "promote"  # as on SQLite (tests/gate/test_run_gate.py)
