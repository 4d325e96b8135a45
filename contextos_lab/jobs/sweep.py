"""The scheduled job (`contextos-lab sweep`, `contextos_lab.api.run_sweep`): notebook 02
runs (or resumes) the study on the search set, notebook 03 gates its feasible front on the
held-out set, both rendered to HTML under `DIR/reports/<run_id>/`; proposal files go to
`DIR/proposals/`. Refusals and failures raise `JobError` with the exit status."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.errors import EXIT_NOTEBOOK, JobError
from contextos_lab.jobs.gate import check_inputs, gate_and_emit

if TYPE_CHECKING:  # papermill and the emitter load when the job runs, not for `--help`
    from contextos_lab.proposals.files.emit import EmitResult
    from contextos_lab.reports.render import RenderedReport

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
    from contextos_lab.reports.render import NotebookFailed, run_report
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
        raise JobError(str(exc), EXIT_NOTEBOOK) from exc  # 02's errors: all "a notebook failed"
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
