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
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_LEDGER = Path(".contextos/heldout_ledger.jsonl")
LEDGER_ENV = "CONTEXTOS_HELDOUT_LEDGER"
#: More earlier reads than this and every report and proposal carries a reuse warning.
READS_WARNING_THRESHOLD = 5


class HeldoutRead(BaseModel):
    """One read of a held-out set by the gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    manifest_hash: str = Field(min_length=1)
    run_id: str
    study: str
    spec_hash: str
    heldout_path: str
    n_cases: int
    n_candidates: int
    at: datetime


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
        for line in fh:
            try:
                out.append(HeldoutRead.model_validate_json(line))
            except ValueError:
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
        before = 0
        for line in fh:
            try:
                before += json.loads(line).get("manifest_hash") == manifest_hash
            except ValueError:
                continue
        fh.seek(0, os.SEEK_END)
        fh.write(entry.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return before


def reads_warning(prior: int, threshold: int = READS_WARNING_THRESHOLD) -> str | None:
    if prior <= threshold:
        return None
    return (
        f"this held-out set has been read {prior} times before; repeated use turns it into a "
        "search set (consider a fresh held-out set)"
    )
