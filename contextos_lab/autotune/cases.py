"""A replay set as the study sees it: the cases frame plus the hashes that pin it.

Trials record which cases they ran on by content hash, so a reviewer can tell from the study
alone that the optimizer never saw a held-out case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import canonical_json, sha256_hex

#: Columns a replay-set loader may already provide with each case's content hash.
HASH_COLUMNS: tuple[str, ...] = ("content_hash", "case_hash", "sha256")


@dataclass(frozen=True)
class CaseSet:
    path: str
    cases: pd.DataFrame
    case_hashes: tuple[str, ...]
    manifest_hash: str

    @property
    def digest(self) -> str:
        """One hash over the sorted case hashes (what a trial ran on, in 64 characters)."""
        return sha256_hex("\n".join(sorted(self.case_hashes)))

    def __len__(self) -> int:
        return len(self.cases)

    def id_to_hash(self) -> dict[str, str]:
        return dict(zip(self.cases["case_id"].astype(str), self.case_hashes, strict=True))


def case_hash(row: Mapping[str, Any]) -> str:
    for col in HASH_COLUMNS:
        value = row.get(col)
        if isinstance(value, str) and value:
            return value
    return sha256_hex(canonical_json({k: _jsonable(v) for k, v in row.items()}))


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value


class OutOfScope(ContextosError, ValueError):
    """No case of the set belongs to the target's workflow."""


def in_intent(case_intent: str, intent: str, aliases: tuple[str, ...] = ()) -> bool:
    """A case is in a workflow when its intent is the workflow, a dotted child of it
    (`a.b.c` in `a.b`), or one of the project's declared case intents for it."""
    return case_intent == intent or case_intent.startswith(f"{intent}.") or case_intent in aliases


def scope_to_intent(case_set: CaseSet, intent: str | None) -> CaseSet:
    """Only the cases of `target.intent`'s workflow (seed 001: "keeps the search local to one
    business workflow"). A set without an `intent` column has nothing to scope by and is kept
    whole; a set with none of the workflow's cases is an `OutOfScope` error naming the intents
    it has. Aliases come from the active project's `case_intents`."""
    if not intent or "intent" not in case_set.cases:
        return case_set
    from contextos_lab.domain.active import active_project

    aliases = tuple(active_project().case_intents.get(intent, ()))
    intents = case_set.cases["intent"].astype(str)
    keep = intents.map(lambda v: in_intent(v, intent, aliases)).to_numpy(dtype=bool)
    if keep.all():
        return case_set
    if not keep.any():
        raise OutOfScope(
            f"{case_set.path}: no case of target.intent {intent!r} (case intents: "
            f"{', '.join(sorted(intents.unique()))}; map them in the project's case_intents)"
        )
    return CaseSet(
        path=case_set.path,
        cases=case_set.cases[keep].reset_index(drop=True),
        case_hashes=tuple(h for h, k in zip(case_set.case_hashes, keep, strict=True) if k),
        manifest_hash=case_set.manifest_hash,
    )


def case_set_from_frame(
    cases: pd.DataFrame, path: str = "<memory>", manifest_hash: str = ""
) -> CaseSet:
    hashes = tuple(case_hash(row) for row in cases.to_dict(orient="records"))
    return CaseSet(
        path=path,
        cases=cases.reset_index(drop=True),
        case_hashes=hashes,
        manifest_hash=manifest_hash or sha256_hex("\n".join(sorted(hashes))),
    )


def load_case_set(path: str | Path) -> CaseSet:
    """A replay-set folder through the kit's loader (contextos_lab.harness.replay_sets), or a
    single `.jsonl` / `.json` / `.parquet` / `.csv` file of cases (one row per case)."""
    p = Path(path)
    if p.is_file():
        readers = {
            ".jsonl": lambda: pd.read_json(p, lines=True),
            ".json": lambda: pd.read_json(p),
            ".parquet": lambda: pd.read_parquet(p),
            ".csv": lambda: pd.read_csv(p),
        }
        if p.suffix not in readers:
            raise ValueError(f"{p}: unsupported case file type {p.suffix!r}")
        return case_set_from_frame(readers[p.suffix](), str(p))
    from contextos_lab.harness import replay_sets

    loaded = replay_sets.load_replay_set(p)
    frame, manifest = loaded if isinstance(loaded, tuple) else (loaded, None)
    return case_set_from_frame(frame, str(path), _manifest_hash(manifest))


def _manifest_hash(manifest: Any) -> str:
    if manifest is None:
        return ""
    for attr in ("set_sha256", "manifest_hash", "content_hash", "sha256"):
        value = getattr(manifest, attr, None)
        value = value() if callable(value) else value
        if isinstance(value, str) and value:
            return value
        if isinstance(manifest, Mapping) and isinstance(manifest.get(attr), str):
            return str(manifest[attr])
    if isinstance(manifest, Mapping):
        return sha256_hex(canonical_json(dict(manifest)))
    return ""


def heldout_case_hashes(path: str | Path) -> dict[str, str]:
    """Case id -> content hash of a held-out set without reading its cases.

    A replay-set folder answers from its manifest; a single file has no manifest, so its cases
    must be hashed (a folder with a manifest is the layout the gate expects).
    """
    from contextos_lab.harness.replay_sets import MANIFEST_FILE

    p = Path(path)
    manifest = p / MANIFEST_FILE
    if p.is_dir() and manifest.is_file():
        cases = json.loads(manifest.read_text(encoding="utf-8"))["cases"]
        return {str(k): str(v) for k, v in cases.items()}
    return load_case_set(p).id_to_hash()


def overlap(a: CaseSet, b: CaseSet) -> list[str]:
    """Cases the two sets share, named `a_id=b_id` (or one id when both carry it). Must be
    empty for a search/held-out pair; `overlap_details` says which rule found each."""
    return [name for name, _ in overlap_details(a, b)]


def overlap_details(a: CaseSet, b: CaseSet) -> list[tuple[str, str]]:
    """(name, rule) of every shared case: the same id or content hash
    (replay_sets.check_disjoint's rule), or a copy once normalised (`contextos_lab.overlap`:
    ids and hashes ignored, every text as its skeleton, lists sorted), equal apart from its
    lists (one extra forbidden string), or a near copy (Jaccard >= 0.9 over normalised word
    shingles). The spec-time check and the gate both call this, so they refuse the same sets."""
    from contextos_lab.harness.replay_sets import ReplaySetOverlapError, check_disjoint
    from contextos_lab.overlap.near_copies import copies

    shared: dict[tuple[str, str], str] = {}
    try:
        check_disjoint(a.id_to_hash(), b.id_to_hash())
    except ReplaySetOverlapError as exc:
        shared.update(dict.fromkeys(exc.shared, "same id or content hash"))
    for found in copies(compared_cases(a), compared_cases(b)):
        shared.setdefault((found.a_id, found.b_id), found.how)
    return [(f"{x}={y}" if x != y else x, how) for (x, y), how in sorted(shared.items())]


#: Comparable forms by set digest (a few sets per process: search, held-out, refresh).
_CACHE: dict[str, tuple[Any, ...]] = {}


def compared_cases(cases: CaseSet) -> tuple[Any, ...]:
    """The set's cases in comparable form, computed once per content (the set's digest)."""
    from contextos_lab.overlap.near_copies import compared

    digest = cases.digest + sha256_hex(
        "\n".join(cases.cases.get("case_id", pd.Series()).astype(str))
    )
    if digest not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.pop(next(iter(_CACHE)))
        rows = cases.cases.to_dict(orient="records")
        _CACHE[digest] = tuple(
            compared(str(r.get("case_id", i)), {k: _jsonable(v) for k, v in r.items()})
            for i, r in enumerate(rows)
        )
    return _CACHE[digest]
