"""`contextos-lab sweep SPEC --out DIR`: the scheduled path, notebooks 02 and 03, then emission.

Notebook 02 runs (or resumes) the study on the search set; notebook 03 gates the feasible front
on the held-out set; both are executed by papermill and rendered to HTML under
`DIR/reports/<run_id>/`. Proposal files go to `DIR/proposals/`. Exit 0 on success even when
nothing is promoted; a bad spec, unreachable storage or a failed notebook exits non-zero with a
message (a failed notebook's partial executed copy is kept for debugging).
"""

from __future__ import annotations

import argparse

from contextos_lab.cli.conventions import add_command, positive_int, show_progress
from contextos_lab.cli.gate import (
    add_gate_arguments,
    open_store_for_gate,
    print_emitted,
    print_stored,
)
from contextos_lab.errors import JobError
from contextos_lab.jobs.sweep import SWEEP_NOTEBOOK, SweepJob, run_sweep

#: Re-exported: callers and tests name them from here (tests replace `run_sweep` here).
__all__ = ["SWEEP_NOTEBOOK", "JobError", "SweepJob", "run_sweep"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "sweep",
        example=[
            "contextos-lab sweep my_run.yaml --out out/sweep",
            "contextos-lab sweep my_run.yaml --out out/sweep --n-trials 40 --no-progress",
        ],
        description=(
            "The scheduled job: run or resume the study a spec declares, gate its feasible "
            "Pareto front on held-out, render both notebooks to HTML and emit proposal files."
        ),
    )
    p.add_argument("spec", help="run spec (YAML or JSON)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--n-trials", type=positive_int, default=None, help="budget incl. baseline trial"
    )
    p.add_argument("--storage", default=None, help="Optuna storage URL or journal path")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes on one study")
    add_gate_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    opened = open_store_for_gate(args.store)
    if opened is None:
        return 2
    store, preferences = opened
    # a refusal raises JobError: one line and its exit status from `cli.app.main`
    job = run_sweep(
        args.spec,
        args.out,
        n_trials=args.n_trials,
        storage=args.storage,
        workers=args.workers,
        ledger=args.ledger,
        insights=args.insights,
        sources=args.sources,
        max_candidates=args.max_candidates,
        progress=show_progress(args),
        preferences=preferences,
    )
    print(f"evaluation run {job.run_id}; sweep report: {job.sweep_report.html}")
    print_emitted(job.emitted, job.gate_report)
    if store is not None:
        print_stored(job.emitted, store, args.store)
    return 0
