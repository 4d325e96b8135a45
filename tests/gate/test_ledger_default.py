"""The default held-out ledger lands in the caller's working directory, not in the repository.

Notebook 03 runs under papermill with the repository root as its working directory; `gate` and
`sweep` resolve the ledger (default `.contextos/heldout_ledger.jsonl` or
`$CONTEXTOS_HELDOUT_LEDGER`) against the directory they were started from before launching it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.gate.heldout import ledger
from contextos_lab.reports.render import REPO_ROOT
from tests.gate.conftest import study_for
from tests.gate.gate_toy import write_project

REPO_LEDGER = REPO_ROOT / ledger.DEFAULT_LEDGER


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_resolve_ledger_is_absolute_against_the_callers_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ledger.LEDGER_ENV, raising=False)
    assert ledger.resolve_ledger() == tmp_path.resolve() / ".contextos" / "heldout_ledger.jsonl"
    monkeypatch.setenv(ledger.LEDGER_ENV, "state/reads.jsonl")
    assert ledger.resolve_ledger() == tmp_path.resolve() / "state" / "reads.jsonl"
    assert ledger.resolve_ledger("x.jsonl") == tmp_path.resolve() / "x.jsonl"


@pytest.mark.notebook
def test_gate_without_ledger_writes_default_ledger_under_the_callers_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=6)
    out = tmp_path / "out"
    study_for(spec, out)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv(ledger.LEDGER_ENV, raising=False)
    in_repo_before = _lines(REPO_LEDGER)

    code = main(["gate", "--spec", str(spec), "--out", str(out)])  # no --ledger
    assert code == 0, capsys.readouterr()

    here = cwd / ".contextos" / "heldout_ledger.jsonl"
    assert here.exists(), "the default ledger belongs in the directory the command ran from"
    assert [r.run_id for r in ledger.reads(here)] == [
        json.loads((out / "gate.json").read_text())["run_id"]
    ]
    assert _lines(REPO_LEDGER) == in_repo_before, "nothing was appended to the repository's"


@pytest.mark.notebook
def test_sweep_relative_env_ledger_resolves_against_the_callers_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextos_lab.cli.sweep import run_sweep

    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=6)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv(ledger.LEDGER_ENV, "state/reads.jsonl")
    in_repo = REPO_ROOT / "state" / "reads.jsonl"
    assert not in_repo.exists()

    job = run_sweep(spec, tmp_path / "out", ledger=None)

    here = cwd / "state" / "reads.jsonl"
    assert [r.run_id for r in ledger.reads(here)] == [job.run_id]
    assert not in_repo.exists()
