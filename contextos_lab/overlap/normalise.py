"""A case as overlap checks compare it: what it says, not how it is spelled or named.

Ids and hashes are dropped at every level (a copy under a new id, or with its stale content
hash, is the same case). Every string becomes its `skeleton` (NFKC, so full-width folds;
zero-width and other invisible characters removed; look-alike letters from other scripts
mapped to Latin), case-folded with whitespace collapsed. A list of scalars is set-like
(entities, forbidden strings, edge cases): it is sorted, so a reordered list is the same list.
Integral floats compare equal to ints (`10.0` is `10`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from contextos_lab.memory.skeleton import skeleton
from contextos_lab.schemas.base import canonical_json, sha256_hex

#: Keys that name or pin a case rather than say what it is.
ID_KEYS = frozenset({"case_id", "packet_id", "id", "content_hash", "case_hash", "sha256"})
_HASH_KEY = re.compile(r"(?:^|_)(?:hash|sha256|digest)$")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")


def is_id_key(key: str) -> bool:
    return key in ID_KEYS or bool(_HASH_KEY.search(key))


def text(value: str) -> str:
    """A text field's comparable form."""
    return _SPACE.sub(" ", skeleton(value)).strip().casefold()


def normalised(value: Any) -> Any:
    """`value` in the comparable form above (JSON-able)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {text(str(k)): normalised(v) for k, v in value.items() if not is_id_key(str(k))}
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return normalised(value.tolist())
    if isinstance(value, list | tuple | set | frozenset):
        items = [normalised(v) for v in value]
        if all(not isinstance(v, dict | list) for v in items):
            return sorted(items, key=canonical_json)
        return items
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


def normalised_key(row: Mapping[str, Any]) -> str:
    """One hash per case content: equal for copies that differ only in spelling, ids, order."""
    return sha256_hex(canonical_json(normalised(dict(row))))


def bagged(form: Any) -> Any:
    """A normalised case with every list sorted, lists of objects too: a case whose evidence
    items or turns come in another order says the same thing."""
    if isinstance(form, dict):
        return {k: bagged(v) for k, v in form.items()}
    if isinstance(form, list):
        return sorted((bagged(v) for v in form), key=canonical_json)
    return form


def shape_of(form: Any) -> Any:
    """A bagged case with every text replaced by one placeholder: its structure, numbers and
    flags. Cases of one shape differ only in their texts."""
    if isinstance(form, dict):
        return {k: shape_of(v) for k, v in form.items()}
    if isinstance(form, list):
        return [shape_of(v) for v in form]
    return "\u00a7" if isinstance(form, str) else form


def texts(form: Any) -> list[str]:
    """The texts of a bagged case, in its canonical order."""
    if isinstance(form, dict):
        return [t for k in sorted(form) for t in texts(form[k])]
    if isinstance(form, list):
        return [t for v in form for t in texts(v)]
    return [form] if isinstance(form, str) else []


def without_sets(form: Any) -> Any:
    """A normalised case with its set-like lists left out: two cases equal here say the same
    thing and differ at most in which entities or forbidden strings they list."""
    if isinstance(form, dict):
        return {k: without_sets(v) for k, v in form.items() if not _set_like(v)}
    if isinstance(form, list):
        return [without_sets(v) for v in form]
    return form


def _set_like(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)


def words(form: Any) -> list[str]:
    """A normalised case's values as one run of words (keys left out: every case has them)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None:
            out.extend(_WORD.findall(str(value)))

    walk(form)
    return out


def shingles(form: Any, k: int = 3) -> set[str]:
    """Word k-grams of a normalised case's values: what near-copy similarity is measured on."""
    w = words(form)
    if len(w) < k:
        return {" ".join(w)} if w else set()
    return {" ".join(w[i : i + k]) for i in range(len(w) - k + 1)}


def normalised_hash(row: Mapping[str, Any]) -> str:
    """Content hash of a case as every overlap check compares it (`normalised_key`: ids and
    hashes ignored, texts as skeletons, lists sorted)."""
    return normalised_key({str(k): _normalise_scalar(v) for k, v in row.items()})


def _normalise_scalar(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value
