"""Append-only ledger of held-out reads, keyed by the held-out set's manifest hash.

Every time the gate loads a held-out set it appends one line here *before* any candidate runs,
so a crashed or abandoned gate run still counts as a read. The count of earlier reads travels
into each proposal: a held-out set consulted many times is slowly being fitted to, however
careful each single test is.

Format: JSON lines, one read per line. Default location `.contextos/heldout_ledger.jsonl` (the
project's state folder, like the signing key), overridable with `CONTEXTOS_HELDOUT_LEDGER` or an
explicit path, so it persists across runs of one project. A relative path (the default included)
is relative to the working directory of the process that calls these functions. Notebook 03 runs
under papermill with the *repository root* as its working directory, so the `gate` and `sweep`
commands resolve the ledger (`resolve_ledger`) against the directory they were started from and
pass it to the notebook as an absolute path; the default ledger therefore lands in
`<where you ran the command>/.contextos/`, never in the repository. The demo keeps one ledger
per output folder, `DIR/.contextos/heldout_ledger.jsonl`.
Appends take an exclusive `fcntl` lock, so concurrent gate runs never interleave lines.

Besides reads, the ledger holds each held-out set's error budget (`gate.heldout.error_budget`): a
`claim` line when a gate takes its level (under the same lock as its read, so two concurrent
gates get distinct indices), an `outcome` line when it knows whether it promoted, and a `retire`
line when the set is retired by `contextos-lab heldout refresh`. The budget state is replayed
from these lines, so every process and machine sharing the ledger shares one budget; a claim
whose outcome never arrived (a crashed gate) counts as spent and not promoted, which is
conservative.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contextos_lab.errors import EXIT_HELDOUT, ContextosError
from contextos_lab.gate.heldout.error_budget import BudgetState, state
from contextos_lab.schemas.error_budget import ErrorBudget

DEFAULT_LEDGER = Path(".contextos/heldout_ledger.jsonl")
LEDGER_ENV = "CONTEXTOS_HELDOUT_LEDGER"
#: More earlier reads than this and every report and proposal carries a reuse warning.
READS_WARNING_THRESHOLD = 5


class HeldoutRead(BaseModel):
    """One read of a held-out set by the gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["read"] = "read"
    manifest_hash: str = Field(min_length=1)
    run_id: str
    study: str
    spec_hash: str
    heldout_path: str
    n_cases: int
    n_candidates: int
    at: datetime


class BudgetClaim(BaseModel):
    """A gate took the `index`-th level of a held-out set's error budget."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["claim"] = "claim"
    manifest_hash: str = Field(min_length=1)
    run_id: str
    index: int = Field(ge=1)
    level: float = Field(ge=0)
    budget: ErrorBudget
    at: datetime


class BudgetOutcome(BaseModel):
    """Whether the gate of claim `index` promoted anything, and its p-value as one test."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["outcome"] = "outcome"
    manifest_hash: str = Field(min_length=1)
    run_id: str
    index: int = Field(ge=1)
    p_value: float = Field(ge=0, le=1)
    promoted: bool
    at: datetime


class Retirement(BaseModel):
    """A held-out set taken out of use; its normalised case hashes keep new sets disjoint."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["retire"] = "retire"
    manifest_hash: str = Field(min_length=1)
    heldout_path: str
    reason: str
    replaced_by: str | None = None
    content_hashes: list[str] = Field(default_factory=list)
    at: datetime


class HeldoutBudgetSpent(ContextosError, RuntimeError):
    """The held-out set's error budget is spent (or the set is retired): refresh it."""

    exit_code = EXIT_HELDOUT


def _lines(fh: Any) -> Iterator[dict[str, Any]]:
    for line in fh:
        try:
            obj = json.loads(line)
        except ValueError:
            continue  # a torn last line from a crash
        if isinstance(obj, dict):
            yield obj


def ledger_path(path: str | Path | None = None) -> Path:
    if path is not None:
        return Path(path)
    return Path(os.environ.get(LEDGER_ENV) or DEFAULT_LEDGER)


def resolve_ledger(path: str | Path | None = None) -> Path:
    """The ledger `path` (None: `CONTEXTOS_HELDOUT_LEDGER` or the default) as an absolute path,
    resolved against *this* process's working directory. Call it before handing the ledger to a
    notebook, whose kernel runs in another directory."""
    return ledger_path(path).expanduser().resolve()


@contextmanager
def _locked(path: Path, mode: str) -> Iterator[Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode, encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX if "a" in mode else fcntl.LOCK_SH)
        try:
            yield fh
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def reads(path: str | Path | None = None) -> list[HeldoutRead]:
    """Every recorded read, oldest first (a torn last line from a crash is skipped)."""
    p = ledger_path(path)
    if not p.exists():
        return []
    out = []
    with _locked(p, "r") as fh:
        for obj in _lines(fh):
            if obj.get("kind", "read") != "read":
                continue
            try:
                out.append(HeldoutRead.model_validate(obj))
            except ValidationError:
                continue
    return out


def prior_reads(manifest_hash: str, path: str | Path | None = None) -> int:
    """How many times this held-out set (by manifest hash) has been read before."""
    return sum(1 for r in reads(path) if r.manifest_hash == manifest_hash)


def record_read(
    *,
    manifest_hash: str,
    run_id: str,
    study: str,
    spec_hash: str,
    heldout_path: str,
    n_cases: int,
    n_candidates: int,
    path: str | Path | None = None,
) -> int:
    """Append one read and return the number of reads of this set *before* it (under the lock,
    so two concurrent runs get distinct counts)."""
    p = ledger_path(path)
    entry = HeldoutRead(
        manifest_hash=manifest_hash,
        run_id=run_id,
        study=study,
        spec_hash=spec_hash,
        heldout_path=heldout_path,
        n_cases=n_cases,
        n_candidates=n_candidates,
        at=datetime.now(UTC),
    )
    with _locked(p, "a+") as fh:
        fh.seek(0)
        before = sum(_is_read_of(obj, manifest_hash) for obj in _lines(fh))
        _append(fh, entry)
    return before


def _is_read_of(obj: dict[str, Any], manifest_hash: str) -> bool:
    return obj.get("kind", "read") == "read" and obj.get("manifest_hash") == manifest_hash


def _append(fh: Any, *entries: BaseModel) -> None:
    fh.seek(0, os.SEEK_END)
    fh.write("".join(e.model_dump_json() + "\n" for e in entries))
    fh.flush()
    os.fsync(fh.fileno())


def _budget_of(
    objs: list[dict[str, Any]], manifest_hash: str, budget: ErrorBudget
) -> tuple[ErrorBudget, list[bool], Retirement | None]:
    """(the budget this set was first claimed under, outcomes by claim order, retirement)."""
    claims = [
        BudgetClaim.model_validate(o)
        for o in objs
        if o.get("kind") == "claim" and o.get("manifest_hash") == manifest_hash
    ]
    promoted = {
        o.get("index"): bool(o.get("promoted"))
        for o in objs
        if o.get("kind") == "outcome" and o.get("manifest_hash") == manifest_hash
    }
    retired = next(
        (
            Retirement.model_validate(o)
            for o in objs
            if o.get("kind") == "retire" and o.get("manifest_hash") == manifest_hash
        ),
        None,
    )
    first = claims[0].budget if claims else budget
    return first, [promoted.get(c.index, False) for c in claims], retired


def budget_state(
    manifest_hash: str, budget: ErrorBudget | None = None, path: str | Path | None = None
) -> tuple[BudgetState, Retirement | None]:
    """Where a held-out set's error budget stands (read only), and its retirement if any."""
    p = ledger_path(path)
    objs: list[dict[str, Any]] = []
    if p.exists():
        with _locked(p, "r") as fh:
            objs = list(_lines(fh))
    first, outcomes, retired = _budget_of(objs, manifest_hash, budget or ErrorBudget())
    return state(outcomes, first), retired


def refresh_hint(heldout_path: str) -> str:
    return (
        f"refresh it: contextos-lab heldout refresh --spec SPEC --from NEW_CASES.jsonl "
        f"(splits a new held-out set disjoint from the search set and every retired set, and "
        f"retires {heldout_path} in the ledger), then point the spec's heldout_test_set at it"
    )


def claim_gate(
    *,
    manifest_hash: str,
    run_id: str,
    study: str,
    spec_hash: str,
    heldout_path: str,
    n_cases: int,
    n_candidates: int,
    budget: ErrorBudget,
    path: str | Path | None = None,
) -> tuple[int, BudgetState]:
    """Record one read and claim the next level of the set's error budget, atomically.

    Returns (reads before this one, the budget state this gate is tested under). Raises
    HeldoutBudgetSpent, recording nothing, when the set is retired or its budget is spent."""
    p = ledger_path(path)
    now = datetime.now(UTC)
    with _locked(p, "a+") as fh:
        fh.seek(0)
        objs = list(_lines(fh))
        first, outcomes, retired = _budget_of(objs, manifest_hash, budget)
        if retired is not None:
            raise HeldoutBudgetSpent(
                f"held-out set {heldout_path} was retired ({retired.reason}); "
                + refresh_hint(heldout_path)
            )
        current = state(outcomes, first)
        if current.spent_out:
            raise HeldoutBudgetSpent(
                f"held-out set {heldout_path}: {current.summary()}; nothing more can be "
                "promoted on it; " + refresh_hint(heldout_path)
            )
        before = sum(_is_read_of(o, manifest_hash) for o in objs)
        read = HeldoutRead(
            manifest_hash=manifest_hash,
            run_id=run_id,
            study=study,
            spec_hash=spec_hash,
            heldout_path=heldout_path,
            n_cases=n_cases,
            n_candidates=n_candidates,
            at=now,
        )
        claim = BudgetClaim(
            manifest_hash=manifest_hash,
            run_id=run_id,
            index=current.next_index,
            level=current.next_level,
            budget=first,
            at=now,
        )
        _append(fh, read, claim)
    return before, current


def record_outcome(
    *,
    manifest_hash: str,
    run_id: str,
    index: int,
    p_value: float,
    promoted: bool,
    path: str | Path | None = None,
) -> None:
    """Record whether claim `index` promoted: a promotion earns budget back (LORD++)."""
    entry = BudgetOutcome(
        manifest_hash=manifest_hash,
        run_id=run_id,
        index=index,
        p_value=min(1.0, max(0.0, p_value)),
        promoted=promoted,
        at=datetime.now(UTC),
    )
    with _locked(ledger_path(path), "a+") as fh:
        _append(fh, entry)


def retire(
    *,
    manifest_hash: str,
    heldout_path: str,
    reason: str,
    replaced_by: str | None,
    content_hashes: list[str],
    path: str | Path | None = None,
) -> None:
    entry = Retirement(
        manifest_hash=manifest_hash,
        heldout_path=heldout_path,
        reason=reason,
        replaced_by=replaced_by,
        content_hashes=content_hashes,
        at=datetime.now(UTC),
    )
    with _locked(ledger_path(path), "a+") as fh:
        _append(fh, entry)


def retired_content_hashes(path: str | Path | None = None) -> set[str]:
    """Normalised case hashes of every retired held-out set (new sets must avoid them)."""
    p = ledger_path(path)
    if not p.exists():
        return set()
    with _locked(p, "r") as fh:
        return {
            h for o in _lines(fh) if o.get("kind") == "retire" for h in o.get("content_hashes", [])
        }


def reads_warning(prior: int, threshold: int = READS_WARNING_THRESHOLD) -> str | None:
    if prior <= threshold:
        return None
    return (
        f"this held-out set has been read {prior} times before; repeated use turns it into a "
        "search set (consider a fresh held-out set)"
    )
