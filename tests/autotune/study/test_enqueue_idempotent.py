"""Enqueueing the same outside config twice adds one trial: a notebook's Run All twice, or a
retried job, evaluates (and so judges) one trial, not two."""

from __future__ import annotations

from pathlib import Path

from contextos_lab.autotune.study.enqueue import enqueue
from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.run import work
from contextos_lab.autotune.study.storage import open_storage
from tests.autotune.study.test_study import make_ctx


def test_same_config_by_same_proposer_is_enqueued_once(case_dir: Path) -> None:
    ctx = make_ctx(case_dir)
    study = open_study(ctx, open_storage("memory"))
    first = enqueue(ctx, study, config={"top_k": 1}, by="alice", rationale="cheaper")
    again = enqueue(ctx, study, config={"top_k": 1}, by="alice", rationale="cheaper")
    assert first.new and not again.new and again.trial_number == 0
    assert len(study.trials) == 1 and again.waiting == 1
    work(ctx, study, budget=1)  # evaluated: still recognised, still one trial
    evaluated = enqueue(ctx, study, config={"top_k": 1}, by="alice", rationale="cheaper")
    assert not evaluated.new and evaluated.waiting == 0 and len(study.trials) == 1
    other = enqueue(ctx, study, config={"top_k": 1}, by="bob", rationale="cheaper")
    assert other.new and len(study.trials) == 2  # another proposer's provenance is its own


def test_a_new_proposal_names_the_trial_that_runs_it(case_dir: Path) -> None:
    """Run All twice says the same thing: "trial N" whether this run enqueued it or found it."""
    ctx = make_ctx(case_dir)
    study = open_study(ctx, open_storage("memory"))
    work(ctx, study, budget=1)  # the baseline is trial 0
    first = enqueue(ctx, study, config={"top_k": 1}, by="alice", rationale="cheaper")
    assert first.new and first.trial_number == 1
    work(ctx, study, budget=2)
    ran = study.trials[first.trial_number]
    assert ran.user_attrs["proposer"] == first.proposer and ran.params == first.params
    again = enqueue(ctx, study, config={"top_k": 1}, by="alice", rationale="cheaper")
    assert not again.new and again.trial_number == first.trial_number
