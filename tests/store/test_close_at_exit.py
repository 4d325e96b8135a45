"""A process that exits with its SQLite study open leaves the file whole: no write-ahead log for
the next reader to fold in, so a re-run that only reads changes no byte of the study."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRITE = """
import sys, optuna
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.harness.result_cache import ResultCache
url = f"sqlite:///{sys.argv[1]}"
study = optuna.create_study(study_name="s", storage=open_storage(url), load_if_exists=True)
for x in range(20):
    study.add_trial(optuna.trial.create_trial(params={"x": x}, distributions={
        "x": optuna.distributions.IntDistribution(0, 99)}, value=float(x)))
cache = ResultCache(url)  # the cache's own engine on the same file
import atexit, os
atexit._run_exitfuncs()  # as a notebook kernel ends: exit handlers run, nothing is finalized
os._exit(0)
"""
READ = """
import sys, optuna
from contextos_lab.autotune.study.storage import open_storage
study = optuna.load_study(study_name="s", storage=open_storage(f"sqlite:///{sys.argv[1]}"))
assert len(study.trials) == 20
"""


def _run(code: str, db: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code, str(db)], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_exit_leaves_no_log_and_a_read_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "study.db"
    _run(WRITE, db)
    assert not (tmp_path / "study.db-wal").exists()  # checkpointed and removed at exit
    before = db.read_bytes()
    _run(READ, db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["study.db"]
