"""Drive a study to its budget: the ask/tell loop in this process or in spawned workers."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import time
from collections.abc import Callable, Iterator
from typing import Any

import optuna
from tqdm import tqdm

from contextos_lab.autotune.context import RunContext, rebuild
from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.study.baseline import ensure_baseline
from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.study.trial_count import (
    counted_trials,
    reap_interrupted,
)
from contextos_lab.autotune.study.trial_run import run_one_trial

log = logging.getLogger(__name__)


def work(
    ctx: RunContext,
    study: optuna.Study,
    budget: int,
    on_trial: Callable[[optuna.trial.FrozenTrial], None] | None = None,
    *,
    solo: bool = False,
) -> int:
    """Ask/tell until the study holds `budget` counted trials; returns trials run here.

    The count is always re-read from the storage (`solo` is kept for callers but no longer
    trusted): another `search` process may share the study without this one knowing."""
    from contextos_lab.autotune.budget import budget_stop_reason
    from contextos_lab.autotune.spend_guard import first_batch_calls

    baseline = study.user_attrs.get("baseline_scores")
    ran = 0
    calls_per_trial = len(ctx.search) * ctx.spec.repeats
    first = first_batch_calls(ctx)
    while budget - counted_trials(study) > 0:
        stop = budget_stop_reason(study, ctx.spec.budget, calls_per_trial, first)
        if stop is not None:  # the next trial could exceed the spec's budget: stop cleanly
            study.set_user_attr("budget_stop", stop)
            log.warning("study %s stopped: %s", study.study_name, stop)
            break
        frozen = run_one_trial(ctx, study, baseline, budget=budget)
        if frozen is None:
            continue
        ran += 1
        if on_trial is not None:
            on_trial(frozen)
    return ran


def _worker_main(payload: dict[str, Any], storage_url: str, budget: int, index: int) -> None:
    """Entry point of a spawned worker process."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ctx = rebuild(payload)
    storage = open_storage(storage_url)
    study = open_study(ctx, storage, worker_index=index, storage_url=storage_url)
    work(ctx, study, budget)


def _bar_kind() -> tuple[type[tqdm], dict[str, Any]]:
    """tqdm's widget bar in a Jupyter kernel with ipywidgets; without them a text bar on stdout
    there (tqdm.auto would warn `IProgress not found`, and stderr reads as an error in
    JupyterLab); the terminal's usual bar on stderr elsewhere."""
    import sys

    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if type(shell).__name__ != "ZMQInteractiveShell":  # not a Jupyter kernel
        return tqdm, {}
    try:
        import ipywidgets  # noqa: F401  (only whether it is there)
    except ImportError:
        return tqdm, {"file": sys.stdout}
    from tqdm.auto import tqdm as auto

    return auto, {}


@contextlib.contextmanager
def _progress(total: int, initial: int, enabled: bool, desc: str) -> Iterator[tqdm]:
    kind, extra = _bar_kind() if enabled else (tqdm, {})
    bar = kind(total=total, initial=initial, disable=not enabled, desc=desc, unit="trial", **extra)
    try:
        yield bar
    finally:
        bar.close()


def run_study(
    ctx: RunContext,
    storage_url: str,
    *,
    n_trials: int | None = None,
    workers: int = 1,
    sampler: SamplerConfig | None = None,
    progress: bool = True,
    poll_s: float = 0.5,
) -> optuna.Study:
    """Create or resume the study and run it until `n_trials` trials count (baseline included)."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if workers > 1 and storage_url in ("memory", ":memory:"):
        raise ValueError("several workers need a shared storage (sqlite, journal, postgresql)")
    budget = n_trials or ctx.spec.n_trials
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = open_storage(storage_url)
    study = open_study(ctx, storage, sampler=sampler, storage_url=storage_url)
    reap_interrupted(study)
    if ctx.cache is None:  # results paid for live beside the study (harness.result_cache)
        from contextos_lab.harness.result_cache import open_for_study

        ctx.cache = open_for_study(storage_url)
    # counted, not finished: pruned trials count toward the budget, so a resumed bar starts
    # where the budget stands (it stopped at 58/150 when only finished ones were counted)
    with _progress(budget, min(budget, counted_trials(study)), progress, ctx.spec.name) as bar:
        before = counted_trials(study)
        ensure_baseline(ctx, study, budget)
        bar.update(counted_trials(study) - before)
        if workers == 1:
            work(ctx, study, budget, on_trial=lambda _t: bar.update(1), solo=True)
        else:
            _run_workers(ctx, study, storage_url, budget, workers, sampler, bar, poll_s)
    return study


def _run_workers(
    ctx: RunContext,
    study: optuna.Study,
    storage_url: str,
    budget: int,
    workers: int,
    sampler: SamplerConfig | None,
    bar: tqdm,
    poll_s: float,
) -> None:
    payload = ctx.worker_payload()
    if sampler is not None:
        payload["spec"] = {**payload["spec"], "sampler": sampler.model_dump(mode="json")}
    spawn = mp.get_context("spawn")
    procs = [
        spawn.Process(
            target=_worker_main, args=(payload, storage_url, budget, i + 1), name=f"autotune-{i}"
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    try:
        while any(p.is_alive() for p in procs):
            time.sleep(poll_s)
            bar.update(counted_trials(study) - bar.n)
    except BaseException:
        for p in procs:
            p.terminate()
        raise
    finally:
        for p in procs:
            p.join()
    bar.update(counted_trials(study) - bar.n)
    failed = [f"{p.name} exit {p.exitcode}" for p in procs if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"autotune workers failed: {failed}; finished trials are kept")
