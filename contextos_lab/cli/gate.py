"""`contextos-lab gate --study NAME --spec SPEC --out DIR`: the held-out gate alone.

Runs notebook 03 headless (papermill) into `DIR/reports/<run_id>/`, renders it to HTML and emits
proposal files for `promote` verdicts only, each citing that HTML by hash. Exit 0 even when
nothing is promoted (it says so); non-zero with a message on a bad spec, unreachable storage,
a held-out set that overlaps the search set, or a failed notebook (the partial executed
notebook is kept and its path printed). The job itself is `contextos_lab.jobs.gate`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.cli.conventions import (
    add_command,
    add_progress_flag,
    positive_int,
    show_progress,
)
from contextos_lab.errors import EXIT_NO_STUDY, EXIT_USAGE, JobError
from contextos_lab.harness.cache_flags import add_no_cache_flag
from contextos_lab.jobs.gate import GATE_NOTEBOOK, check_inputs, gate_and_emit, require_study

if TYPE_CHECKING:  # Optuna, papermill and the gate load when a job runs, not for `--help`
    from contextos_lab.proposals.files.emit import EmitResult

#: Re-exported: callers and tests name them from here.
__all__ = [
    "EXIT_NO_STUDY", "GATE_NOTEBOOK", "JobError", "check_inputs", "gate_and_emit",
    "require_study",
]  # fmt: skip
EXIT_SPEC = EXIT_USAGE


def print_emitted(result: EmitResult, report: Path, reads: int | None = None) -> None:
    print(result.message)
    for path in [*result.tuning_proposals, *result.research_tasks]:
        print(f"  {path}")
    shown = [n for n in result.not_emitted if n.get("verdict") != "no_effect"][:8]
    for n in shown:
        who = n.get("candidate_id") or n.get("research_task_id")
        print(f"  not emitted: {who} ({n['verdict']}): {n['reasons'][0][:160]}")
    if reads is not None:
        print(f"held-out reads before this run: {reads}")
    print(f"report: {report}")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "gate",
        example="contextos-lab gate --spec my_run.yaml --out out/sweep --study my_run",
        description=(
            "Re-run the baseline and the study's feasible Pareto front on the spec's held-out "
            "set, paired by case; emit TuningProposal files for promoted candidates only."
        ),
    )
    p.add_argument("--study", default=None, help="study name (default: the spec's name)")
    p.add_argument("--spec", required=True, help="run spec (YAML or JSON)")
    p.add_argument("--out", required=True, help="output folder (gate.json, reports/, proposals/)")
    p.add_argument("--storage", default=None, help="Optuna storage (default sqlite DIR/study.db)")
    add_gate_arguments(p)
    p.set_defaults(func=run)


def add_gate_arguments(p: argparse.ArgumentParser) -> None:
    """The held-out gate's options, shared by `gate` and `sweep`."""
    p.add_argument(
        "--ledger",
        default=None,
        help="held-out read ledger (JSON lines; default $CONTEXTOS_HELDOUT_LEDGER or "
        ".contextos/heldout_ledger.jsonl, relative to the current directory)",
    )
    p.add_argument("--insights", default=None, help="insights.json to confirm ResearchTasks")
    p.add_argument("--sources", nargs="*", default=["synthetic"], help="trace sources of 01")
    p.add_argument("--max-candidates", type=positive_int, default=None)
    p.add_argument(
        "--store", default=None, help="SQLAlchemy URL: also store the emitted proposals/tasks"
    )
    add_no_cache_flag(p)  # harness.cache_flags: the gate (and sweep) re-run every call
    add_progress_flag(p)


def run(args: argparse.Namespace) -> int:
    from contextos_lab.autotune.spec.load import load_spec
    from contextos_lab.schemas.ids import new_id

    out = Path(args.out)
    opened = open_store_for_gate(args.store)
    if opened is None:
        return 2
    store, preferences = opened
    # a refusal raises JobError: one line and its exit status from `cli.app.main`
    url = check_inputs(args.spec, args.storage, out, insights=args.insights)
    require_study(url, args.study or load_spec(args.spec).name)
    from contextos_lab.gate.rerun import unchanged_since

    earlier = unchanged_since(
        args.spec, url, out, study_name=args.study, max_candidates=args.max_candidates
    )
    if earlier is not None:
        print(
            f"already gated: study {earlier.study} is unchanged since gate run "
            f"{earlier.run_id} ({out / 'gate.json'}): same spec, front and held-out set; "
            "the held-out set was not read again and nothing new was written"
        )
        return 0
    result, report = gate_and_emit(
        spec_path=Path(args.spec),
        out=out,
        storage=url,
        run_id=new_id("eval"),
        study=args.study,
        ledger=args.ledger,
        insights=args.insights,
        sources=args.sources,
        max_candidates=args.max_candidates,
        progress=show_progress(args),
        preferences=preferences,
    )
    print_emitted(result, report)
    if store is not None:
        print_stored(result, store, args.store)
    return 0


def open_store_for_gate(url: str | None) -> tuple[Any, list[Any]] | None:
    """(store or None, its PreferenceEntry rows) for `--store`; None when it cannot be opened
    (the reason printed). Opened before gating: its judgements are evidence in the proposal."""
    if not url:
        return None, []
    from contextos_lab.cli.store import open_store
    from contextos_lab.schemas.preference import PreferenceEntry

    store = open_store(url)
    if store is None:
        return None
    return store, list(store.list(PreferenceEntry))


def print_stored(result: EmitResult, store: Any, url: str) -> None:
    """Append what emission wrote to the store and say what was stored or refused."""
    from contextos_lab.proposals.files.emitted_store import store_emitted

    stored, refused = store_emitted(result, store)
    print(f"stored in {url}: {len(stored)} proposal(s)/task(s)")
    for line in refused:
        print(f"  not stored: {line}")
