"""`contextos-lab sweep SPEC --out DIR`: the scheduled path, notebooks 02 and 03, then emission.

Notebook 02 runs (or resumes) the study on the search set; notebook 03 gates the feasible front
on the held-out set; both are executed by papermill and rendered to HTML under
`DIR/reports/<run_id>/`. Proposal files go to `DIR/proposals/`. Exit 0 on success even when
nothing is promoted; a bad spec, unreachable storage or a failed notebook exits non-zero with a
message (a failed notebook's partial executed copy is kept for debugging).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextos_lab.cli.conventions import add_command, positive_int, show_progress
from contextos_lab.cli.gate import (
    EXIT_NOTEBOOK,
    JobError,
    add_gate_arguments,
    check_inputs,
    gate_and_emit,
    open_store_for_gate,
    print_emitted,
    print_stored,
)
from contextos_lab.errors import one_line
from contextos_lab.proposals.files.emit import EmitResult
from contextos_lab.reports.render import NotebookFailed, RenderedReport

SWEEP_NOTEBOOK = "02_autotune_sweep"


@dataclass(frozen=True)
class SweepJob:
    run_id: str
    sweep_report: RenderedReport
    gate_report: Path
    emitted: EmitResult


def run_sweep(
    spec_path: str | Path,
    out: str | Path,
    *,
    n_trials: int | None = None,
    storage: str | None = None,
    workers: int = 1,
    ledger: str | None = None,
    insights: str | None = None,
    sources: Sequence[str] = ("synthetic",),
    max_candidates: int | None = None,
    run_id: str | None = None,
    progress: bool = False,
    preferences: Sequence[Any] = (),
) -> SweepJob:
    """Check inputs, run 02 then 03 under papermill, emit. Raises JobError with an exit code."""
    from contextos_lab.autotune.spec.load import load_spec
    from contextos_lab.gate.heldout.ledger import resolve_ledger
    from contextos_lab.reports.render import run_report
    from contextos_lab.schemas.ids import new_id

    out_dir = Path(out)
    url = check_inputs(spec_path, storage, out_dir, insights=insights)
    # against the caller's working directory, before any notebook (kernel cwd: the repo root)
    ledger = str(resolve_ledger(ledger))
    run_id = run_id or new_id("eval")
    budget = n_trials if n_trials is not None else load_spec(spec_path).n_trials
    try:
        sweep_report = run_report(
            SWEEP_NOTEBOOK,
            {
                "spec_path": str(Path(spec_path).resolve()),
                "out_dir": str(out_dir.resolve()),
                "n_trials": budget,
                "storage": url,
                "workers": workers,
            },
            out_dir,
            run_id,
            progress=progress,
        )
    except NotebookFailed as exc:
        raise JobError(str(exc), EXIT_NOTEBOOK) from exc
    emitted, gate_report = gate_and_emit(
        spec_path=Path(spec_path),
        out=out_dir,
        storage=url,
        run_id=run_id,
        ledger=ledger,
        insights=insights,
        sources=sources,
        max_candidates=max_candidates,
        progress=progress,
        preferences=preferences,
    )
    return SweepJob(run_id, sweep_report, gate_report, emitted)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "sweep",
        example=[
            "contextos-lab sweep my_run.yaml --out out/sweep",
            "contextos-lab sweep my_run.yaml --out out/sweep --n-trials 40 "
            "--no-progress",
        ],
        help="notebooks 02 (search) and 03 (held-out gate) with papermill, then emit proposals",
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
    try:
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
    except JobError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return exc.code
    print(f"evaluation run {job.run_id}; sweep report: {job.sweep_report.html}")
    print_emitted(job.emitted, job.gate_report)
    if store is not None:
        print_stored(job.emitted, store, args.store)
    return 0
