"""Notebook 02's progress and resume wording: pruned trials count in the bar (a resumed study
stopped at 58/150 when they did not), a re-run says what a new seed does, and a completed
re-run with the same parameters says exactly what the first run said."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.resume import resume_note, study_note
from contextos_lab.autotune.study.run import run_study
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.sweep import sampler_config
from tests.autotune.study.test_study import make_ctx


def test_resumed_bar_counts_pruned_trials(
    case_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = make_ctx(case_dir)
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = open_study(ctx, open_storage(url))
    for _ in range(3):  # what racing leaves: pruned trials, counted toward the budget
        study.add_trial(optuna.trial.create_trial(state=TrialState.PRUNED))
    run_study(ctx, url, n_trials=4, progress=True)  # the baseline is the one trial left
    assert "4/4" in capsys.readouterr().err


def test_resume_note_says_what_a_new_seed_changes_and_a_rerun_says_what_the_run_said(
    case_dir: Path, tmp_path: Path
) -> None:
    ctx = make_ctx(case_dir)
    url = f"sqlite:///{tmp_path / 's.db'}"
    cfg = sampler_config(ctx.spec)
    first = resume_note(url, ctx.spec.name, cfg, 3)
    assert not (tmp_path / "s.db").exists()  # looking never creates the file
    study = run_study(ctx, url, n_trials=3, progress=False)
    after_first = study_note(study, url, 3)
    assert "complete: 3 trials counted of 3 requested" in after_first
    # Run All again, same parameters: nothing to run, and the same words before and after
    assert resume_note(url, ctx.spec.name, cfg, 3) == first == ""
    again = run_study(ctx, url, n_trials=3, progress=False)
    assert study_note(again, url, 3) == after_first
    reseeded = resume_note(url, ctx.spec.name, sampler_config(ctx.spec, seed=99), 3)
    assert "seed" in reseeded and "changes nothing" in reseeded and "new place" in reseeded
    more = resume_note(url, ctx.spec.name, sampler_config(ctx.spec, seed=99), 5)
    assert "2 more to run" in more and "steers only the trials still to run" in more
