"""`contextos-lab gate --study NAME --spec SPEC --out DIR`: the held-out gate alone.

Runs notebook 03 headless (papermill) into `DIR/reports/<run_id>/`, renders it to HTML and emits
proposal files for `promote` verdicts only, each citing that HTML by hash. Exit 0 even when
nothing is promoted (it says so); non-zero with a message on a bad spec, unreachable storage,
a held-out set that overlaps the search set, or a failed notebook (the partial executed
notebook is kept and its path printed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextos_lab.autotune.spec.load import SpecError, load_spec
from contextos_lab.autotune.study.storage import (
    StorageUnreachable,
    default_storage_url,
    open_storage,
)
from contextos_lab.cli.conventions import (
    add_command,
    add_progress_flag,
    positive_int,
    show_progress,
)
from contextos_lab.errors import (
    EXIT_HELDOUT,
    EXIT_MISMATCH,
    EXIT_NO_STUDY,
    EXIT_NOTEBOOK,
    EXIT_STORAGE,
    EXIT_USAGE,
    one_line,
)
from contextos_lab.harness.result_cache import add_no_cache_flag
from contextos_lab.proposals.files.emit import EmitResult
from contextos_lab.reports.render import NotebookFailed

EXIT_SPEC = EXIT_USAGE
GATE_NOTEBOOK = "03_heldout_gate"
#: Exception names raised inside notebook 03 that deserve their own exit code.
_NOTEBOOK_ERRORS = {
    "HeldoutOverlapError": EXIT_HELDOUT,
    "HeldoutBudgetSpent": EXIT_HELDOUT,
    "StudyNotFound": EXIT_NO_STUDY,
    "StudyMismatch": EXIT_MISMATCH,
    "StorageUnreachable": EXIT_STORAGE,
    "SpecError": EXIT_SPEC,
}


class JobError(RuntimeError):
    """A refused or failed job step, with the exit code the CLI returns for it."""

    def __init__(self, message: str, code: int) -> None:
        self.code = code
        super().__init__(message)


def check_inputs(
    spec_path: str | Path,
    storage: str | None,
    out: Path,
    *,
    insights: str | None = None,
) -> str:
    """Refuse a bad spec, storage or `--insights` file before any notebook starts (not after
    minutes of kernels); the storage URL. (`--store` is opened first by the commands.)"""
    from contextos_lab.autotune.context import prepare

    if insights and not Path(insights).is_file():
        raise JobError(f"--insights {insights}: no such file", EXIT_USAGE)

    try:
        prepare(load_spec(spec_path))
    except SpecError as exc:
        raise JobError(str(exc), exc.code) from exc  # 2, or 7 when the sets overlap
    out.mkdir(parents=True, exist_ok=True)
    url = storage or default_storage_url(out)
    try:
        open_storage(url)
    except StorageUnreachable as exc:
        raise JobError(exc.one_line(), exc.code) from exc
    return url


def require_study(url: str, name: str) -> None:
    """Refuse, before any kernel starts, a study the storage does not hold (a typo'd `--study`
    or a spec never searched): nothing is created in the storage."""
    try:
        open_storage(url).get_study_id_from_name(name)
    except KeyError:
        raise JobError(
            f"no study {name!r} in {url}; run `contextos-lab search` (or `sweep`) on the spec "
            "first, or pass --study NAME",
            EXIT_USAGE,
        ) from None
    except StorageUnreachable as exc:
        raise JobError(exc.one_line(), exc.code) from exc


def gate_and_emit(
    *,
    spec_path: Path,
    out: Path,
    storage: str,
    run_id: str,
    study: str | None = None,
    ledger: str | None = None,
    insights: str | None = None,
    sources: Sequence[str] = ("synthetic",),
    max_candidates: int | None = None,
    progress: bool = False,
    preferences: Sequence[Any] = (),
) -> tuple[EmitResult, Path]:
    """Notebook 03 → HTML report → emission. Returns what was emitted and the report path;
    `preferences` (PreferenceEntry rows) become the proposal's preference evidence."""
    from contextos_lab.gate.heldout.ledger import resolve_ledger
    from contextos_lab.gate.run_gate import GATE_FILE, load_gate_run
    from contextos_lab.proposals.files.emit import emit
    from contextos_lab.reports.render import run_report

    params = {
        "study": study,
        "storage": storage,
        "spec_path": str(spec_path.resolve()),
        "out_dir": str(out.resolve()),
        "run_id": run_id,
        # resolved here, in the caller's working directory: the notebook's kernel runs in the
        # repository root, where a relative (or default) ledger path would otherwise land
        "ledger": str(resolve_ledger(ledger)),
        "max_candidates": max_candidates,
        "insights": str(Path(insights).resolve()) if insights else None,
        "sources": list(sources),
    }
    try:
        report = run_report(GATE_NOTEBOOK, params, out, run_id, progress=progress)
    except NotebookFailed as exc:
        code = next((c for n, c in _NOTEBOOK_ERRORS.items() if n in exc.detail), EXIT_NOTEBOOK)
        raise JobError(str(exc), code) from exc
    run = load_gate_run(out / GATE_FILE)
    if run.run_id != run_id:
        raise JobError(f"{out / GATE_FILE} is not from run {run_id}", EXIT_NOTEBOOK)
    from contextos_lab.proposals.files.emit import UnsafeProposalPath

    try:
        return emit(run, report.html, out, preferences), report.html
    except UnsafeProposalPath as exc:
        raise JobError(str(exc), 2) from exc


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
        help="held-out gate for a study: notebook 03, HTML report, proposal files",
        example="contextos-lab gate --spec my_run.yaml --out out/sweep "
        "--study my_run",
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
    add_no_cache_flag(p)  # harness.result_cache: the gate (and sweep) re-run every call
    add_progress_flag(p)


def run(args: argparse.Namespace) -> int:
    from contextos_lab.schemas.ids import new_id

    out = Path(args.out)
    opened = open_store_for_gate(args.store)
    if opened is None:
        return 2
    store, preferences = opened
    try:
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
    except JobError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return exc.code
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
