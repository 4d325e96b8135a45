"""Refreshing a held-out set: a new split from new cases, disjoint from everything used before.

A spent (or simply old) held-out set is retired in the ledger, with the normalised content
hashes of its cases, and a new one is drawn from cases the user supplies. A new case is kept
only if its normalised content (`contextos_lab.overlap`: ids and hashes ignored, texts as
skeletons, lists sorted) matches no case of the search set, of the current held-out set or of
any set retired before, and no other kept case, and if the gate's overlap rule (copies apart
from their lists, near copies) finds it in neither the search nor the current set: a case that
differs by a trailing space, a look-alike letter or a new id is the same case and would leak
what the retired set taught.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.autotune.cases import HASH_COLUMNS, CaseSet, load_case_set, overlap_details
from contextos_lab.gate.heldout import ledger
from contextos_lab.overlap.normalise import normalised_hash
from contextos_lab.schemas.base import canonical_json, sha256_hex

#: Columns that name a case rather than say what it is.
ID_COLUMNS: tuple[str, ...] = ("case_id", "packet_id", "id", *HASH_COLUMNS)
_SPACE = re.compile(r"\s+")


def _normalise(value: Any) -> Any:
    if isinstance(value, str):
        return _SPACE.sub(" ", unicodedata.normalize("NFKC", value)).strip().casefold()
    if isinstance(value, Mapping):
        return {str(_normalise(k)): _normalise(v) for k, v in value.items() if k not in ID_COLUMNS}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    if hasattr(value, "tolist"):
        return _normalise(value.tolist())
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value


def legacy_hash(row: Mapping[str, Any]) -> str:
    """The normalised hash ledgers recorded before `contextos_lab.overlap` (NFKC, case and
    whitespace only): still matched against retired sets written then."""
    return sha256_hex(canonical_json(_normalise(dict(row))))


def normalised_hashes(cases: pd.DataFrame) -> list[str]:
    return [normalised_hash(r) for r in cases.to_dict(orient="records")]


@dataclass(frozen=True)
class Refresh:
    path: Path
    n_kept: int
    n_offered: int
    dropped: dict[str, int]
    manifest_hash: str
    retired: str


def refresh_heldout(
    *,
    search: CaseSet,
    current: CaseSet,
    current_path: Path,
    new_cases: str | Path,
    out: Path,
    size: int | None = None,
    seed: int = 0,
    ledger_file: str | Path | None = None,
) -> Refresh:
    """Split a fresh held-out set from `new_cases` into `out`, retire the current one."""
    offered = load_case_set(new_cases)
    if len(offered) == 0:
        raise ValueError(f"{new_cases}: no cases to draw a held-out set from")
    used = {"search set": set(normalised_hashes(search.cases))}
    used["current held-out set"] = set(normalised_hashes(current.cases))
    used["a retired held-out set"] = ledger.retired_content_hashes(ledger_file)
    keep, dropped = _new_cases(offered, used, search, current)
    want = size or len(current)
    if len(keep) < want:
        raise ValueError(
            f"{new_cases}: only {len(keep)} of {len(offered)} cases are new (dropped: "
            + ", ".join(f"{n} as {k}" for k, n in dropped.items() if n)
            + f"); a held-out set of {want} needs more"
        )
    chosen = sorted(np.random.default_rng(seed).choice(keep, size=want, replace=False).tolist())
    path = _write(offered, chosen, Path(new_cases), out)
    fresh = load_case_set(path)
    ledger.retire(
        manifest_hash=current.manifest_hash,
        heldout_path=str(current_path),
        reason="refreshed",
        replaced_by=fresh.manifest_hash,
        content_hashes=sorted(used["current held-out set"]),
        path=ledger_file,
    )
    return Refresh(
        path=path,
        n_kept=want,
        n_offered=len(offered),
        dropped=dropped,
        manifest_hash=fresh.manifest_hash,
        retired=current.manifest_hash,
    )


def _new_cases(
    offered: CaseSet, used: dict[str, set[str]], search: CaseSet, current: CaseSet
) -> tuple[list[int], dict[str, int]]:
    """Positions of the offered cases that are new, and how many were dropped as what: a
    normalised hash already `used` (a retired set's legacy hash too), a copy by the gate's own
    overlap rule (copies apart from lists, near copies), or a repeat among the offered."""
    copied = {
        name.split("=")[-1]: where
        for where, other in (("search set", search), ("current held-out set", current))
        for name, _ in overlap_details(other, offered)
    }
    dropped = {k: 0 for k in used} | {"duplicate within the new cases": 0}
    keep: list[int] = []
    seen: set[str] = set()
    rows = offered.cases.to_dict(orient="records")
    for i, h in enumerate(normalised_hashes(offered.cases)):
        where = next((k for k, hashes in used.items() if h in hashes), None)
        if where is None and legacy_hash(rows[i]) in used["a retired held-out set"]:
            where = "a retired held-out set"
        if where is None:
            where = copied.get(str(rows[i].get("case_id", i)))
        if where is None and h in seen:
            where = "duplicate within the new cases"
        if where is not None:
            dropped[where] += 1
            continue
        seen.add(h)
        keep.append(i)
    return keep, dropped


def _write(offered: CaseSet, chosen: list[int], source: Path, out: Path) -> Path:
    """A replay-set folder stays one (packets re-written with a manifest); a file of cases
    becomes `out/cases.jsonl`."""
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} exists and is not empty: choose a new folder")
    if source.is_dir():
        from contextos_lab.harness.replay_sets import read_packets, write_replay_set

        ids = set(offered.cases.iloc[chosen]["case_id"].astype(str))
        packets = [p for p in read_packets(source) if p.packet_id in ids]
        write_replay_set(out, packets, {"split": "heldout", "refreshed_from": str(source)})
        return out
    out.mkdir(parents=True, exist_ok=True)
    path = out / "cases.jsonl"
    offered.cases.iloc[chosen].to_json(path, orient="records", lines=True, force_ascii=False)
    return path
