"""Separate `search` processes on one study share its trial budget, and start together safely."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import optuna
import yaml
from optuna.trial import TrialState

from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.study.trial_count import counted_trials
from tests.autotune.conftest import toy_spec_dict

REPO = Path(__file__).resolve().parents[2]


def test_separate_search_processes_stop_at_the_study_budget(case_dir: Path) -> None:
    """Two `search` processes, one of them with two workers, started together on one study."""
    spec_path = case_dir / "run.yaml"
    spec_path.write_text(yaml.safe_dump(toy_spec_dict(harness_kwargs={"delay": 0.02})))
    url, budget = f"sqlite:///{case_dir / 'study.db'}", 12
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "contextos_lab.cli",
                "search",
                str(spec_path),
                "--out",
                str(case_dir / f"out{k}"),
                "--n-trials",
                str(budget),
                "--storage",
                url,
                "--workers",
                str(workers),
                "--no-progress",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k, workers in enumerate((1, 2))
    ]  # started together: the schema and the baseline are created by whoever comes first
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-3000:] for _, err in results]
    study = optuna.load_study(study_name="toy_run", storage=open_storage(url))
    assert counted_trials(study) == budget
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(complete) == budget
    assert sum(bool(t.user_attrs.get("is_baseline")) for t in complete) >= 1
    surplus = [t for t in study.trials if t.user_attrs.get("over_budget")]
    assert all(t.state == TrialState.FAIL for t in surplus)
