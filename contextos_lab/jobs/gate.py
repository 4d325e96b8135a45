"""The held-out gate as a job: refuse bad inputs before any kernel starts, run notebook 03,
emit proposal files for its `promote` verdicts. Every refusal is a `JobError` carrying the exit
status the CLI returns (`contextos_lab.errors`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.errors import EXIT_NOTEBOOK, EXIT_USAGE, ContextosError, JobError

if TYPE_CHECKING:  # Optuna, papermill and the gate load when a job runs, not on import
    from contextos_lab.proposals.files.emit import EmitResult

GATE_NOTEBOOK = "03_heldout_gate"


def notebook_errors() -> tuple[type[ContextosError], ...]:
    """The kit errors notebook 03 may raise that deserve their own exit status (each class's
    `exit_code`); any other failure of the notebook is `EXIT_NOTEBOOK`."""
    from contextos_lab.autotune.spec.load import SpecError
    from contextos_lab.autotune.study.open import StudyMismatch
    from contextos_lab.autotune.study.storage import StorageUnreachable
    from contextos_lab.gate.heldout.heldout import HeldoutOverlapError
    from contextos_lab.gate.heldout.ledger import HeldoutBudgetSpent
    from contextos_lab.gate.study_front import StudyNotFound

    return (
        HeldoutOverlapError, HeldoutBudgetSpent, StudyNotFound, StudyMismatch,
        StorageUnreachable, SpecError,
    )  # fmt: skip


def notebook_exit_code(ename: str | None) -> int:
    """The exit status for a notebook that raised the exception class named `ename` (the type
    name the kernel reports, the only typed value that crosses the kernel boundary)."""
    known = {cls.__name__: cls.exit_code for cls in notebook_errors()}
    return known.get(ename or "", EXIT_NOTEBOOK)


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
    from contextos_lab.autotune.spec.load import SpecError, load_spec
    from contextos_lab.autotune.study.storage import (
        StorageUnreachable,
        default_storage_url,
        open_storage,
    )

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
    from contextos_lab.autotune.study.storage import StorageUnreachable, open_storage

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
    from contextos_lab.reports.render import NotebookFailed, run_report

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
        raise JobError(str(exc), notebook_exit_code(exc.ename)) from exc
    run = load_gate_run(out / GATE_FILE)
    if run.run_id != run_id:
        raise JobError(f"{out / GATE_FILE} is not from run {run_id}", EXIT_NOTEBOOK)
    from contextos_lab.proposals.files.emit import UnsafeProposalPath

    try:
        return emit(run, report.html, out, preferences), report.html
    except UnsafeProposalPath as exc:
        raise JobError(str(exc), EXIT_USAGE) from exc
