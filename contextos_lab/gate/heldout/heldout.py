"""The only code that reads a held-out set (docs/design.md, "Gate semantics").

The study never sees these cases. Before a single case runs, the set is proven disjoint from the
search set (by id and by content hash, against both the spec's search set and the case hashes
the study itself recorded), and the read is appended to the ledger. Then the baseline tuple and
each candidate run on the same cases, so every comparison is paired by case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.autotune.cases import (
    CaseSet,
    OutOfScope,
    load_case_set,
    overlap,
    scope_to_intent,
)
from contextos_lab.autotune.context import RunContext
from contextos_lab.errors import EXIT_HARNESS, EXIT_HELDOUT, ContextosError
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.heldout.error_budget import BudgetState
from contextos_lab.schemas.error_budget import ErrorBudget
from contextos_lab.schemas.scorecard import EvaluatorName


class HeldoutOverlapError(ContextosError, ValueError):
    """The held-out set shares cases with the search set: the gate refuses to read it."""

    exit_code = EXIT_HELDOUT

    def __init__(self, shared: list[str], source: str) -> None:
        self.shared = shared
        shown = ", ".join(shared[:20]) + (
            f" (+{len(shared) - 20} more)" if len(shared) > 20 else ""
        )
        super().__init__(
            f"held-out set refused: it shares {len(shared)} case(s) with {source}: {shown}"
        )


class HeldoutRunError(ContextosError, RuntimeError):
    """A config could not be evaluated on the held-out cases."""

    exit_code = EXIT_HARNESS


@dataclass(frozen=True)
class HeldoutSet:
    cases: CaseSet
    path: Path
    prior_reads: int
    #: The set's error budget before this gate; `budget.next_level` is this gate's alpha.
    budget: BudgetState

    @property
    def manifest_hash(self) -> str:
        return self.cases.manifest_hash


def check_heldout(
    heldout: CaseSet, search: CaseSet, recorded_search_hashes: Iterable[str] = ()
) -> None:
    """Refuse a held-out set that shares any case with the search set, naming the cases."""
    shared = overlap(search, heldout)
    if shared:
        raise HeldoutOverlapError(shared, f"the search set {search.path}")
    recorded = set(recorded_search_hashes)
    if recorded:
        seen = [cid for cid, h in heldout.id_to_hash().items() if h in recorded]
        if seen:
            raise HeldoutOverlapError(seen, "the cases the study ran on")


def heldout_cases(ctx: RunContext) -> tuple[CaseSet, Path]:
    """The spec's held-out cases of the target workflow (seed 001: target.intent) and their
    file. Loading is not a read: no case runs and the ledger is not touched."""
    path = ctx.spec.resolve(ctx.spec.heldout_test_set)
    try:
        heldout = scope_to_intent(load_case_set(path), ctx.spec.target.intent)
    except OutOfScope as exc:
        raise HeldoutRunError(str(exc)) from None
    if len(heldout) == 0:
        raise HeldoutRunError(f"held-out set {path} has no cases")
    return heldout, path


def open_heldout(
    ctx: RunContext,
    *,
    run_id: str,
    study: str,
    spec_hash: str,
    n_candidates: int,
    recorded_search_hashes: Iterable[str] = (),
    ledger_file: str | Path | None = None,
    budget: ErrorBudget | None = None,
) -> HeldoutSet:
    """Load the spec's held-out set, check it against the search set, record the read and
    claim this gate's level of the set's error budget (HeldoutBudgetSpent when none is left)."""
    heldout, path = heldout_cases(ctx)
    check_heldout(heldout, ctx.search, recorded_search_hashes)
    prior, current = ledger.claim_gate(
        manifest_hash=heldout.manifest_hash,
        run_id=run_id,
        study=study,
        spec_hash=spec_hash,
        heldout_path=str(path),
        n_cases=len(heldout),
        n_candidates=n_candidates,
        budget=budget or ErrorBudget(),
        path=ledger_file,
    )
    return HeldoutSet(cases=heldout, path=path, prior_reads=prior, budget=current)


def score_on_heldout(
    ctx: RunContext, heldout: HeldoutSet, params: Mapping[str, Any]
) -> pd.DataFrame:
    """Per-case evaluator frame (index case_id) of one config on the held-out cases.

    Runs through the execution layer (concurrency, timeouts, the study's result cache) with
    the spec's repeats averaged per case: the case stays the unit of every paired test, and an
    errored run scores as a failure (harness.repeat_scores)."""
    from contextos_lab.harness.execution import execute
    from contextos_lab.harness.repeat_scores import score_execution

    config = ctx.space.config(dict(params))
    cases = heldout.cases.cases
    policy = ctx.spec.execution_policy().model_copy(update={"cache": ctx.read_cache})
    try:
        execution = execute(
            ctx.harness, cases, heldout.cases.case_hashes, config, policy, ctx.cache
        )
        frame = score_execution(ctx.evaluate, cases, execution, _economics(ctx)).per_case
    except Exception as exc:
        raise HeldoutRunError(
            f"harness {ctx.harness.name!r} failed on held-out with {dict(params)}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    missing = [e.value for e in EvaluatorName if e.value not in frame.columns]
    if missing:
        raise HeldoutRunError(f"evaluation frame lacks evaluator columns {missing}")
    frame = frame[[e.value for e in EvaluatorName]].astype(float)
    frame.index = pd.Index(frame.index.astype(str), name="case_id")
    return frame


def _economics(ctx: RunContext) -> Any:
    prices = ctx.spec.prices
    if prices is None:
        return None
    from contextos_lab.autotune.budget import economics_cents

    return lambda results: economics_cents(prices, results)


def paired_frames(
    ctx: RunContext, heldout: HeldoutSet, candidates: Mapping[str, Mapping[str, Any]]
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Baseline frame and one frame per candidate (params by id), all on the same cases."""
    baseline = score_on_heldout(ctx, heldout, ctx.space.baseline_params())
    frames = {cid: score_on_heldout(ctx, heldout, p) for cid, p in candidates.items()}
    return baseline, frames
