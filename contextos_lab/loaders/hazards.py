"""Values that cannot be stored as read: non-finite numbers, lone surrogates, deep nesting.

JSON allows `1e400` (Python reads it as `inf`, which is not JSON and would be stored as
`Infinity` or `null`), `NaN`, escapes of lone UTF-16 surrogates (`"\\ud800"`, not encodable as
UTF-8, so it would be stored as something else or not at all) and unbounded nesting (which the
serialisers refuse past a fixed depth). Each is found here with the dotted path of the field
that holds it, so the row is quarantined naming that field instead of being coerced.

The walk is iterative: a 100,000-level document must not exhaust Python's recursion limit.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Deepest nesting a stored value may have (pydantic's JSON reader stops at 200; well below).
MAX_DEPTH = 64
#: Longest string value a row may hold; longer ones are refused before pydantic sees them.
MAX_STRING_CHARS = 1_000_000
#: Integers beyond 64 bits cannot live in a pandas Int64 column, Parquet or PostgreSQL bigint.
INT_LIMIT = 2**63


class NonFinite(str):
    """A JSON number token that does not fit a finite float (`1e400`, `NaN`, `-Infinity`)."""


def parse_float(text: str) -> float | NonFinite:
    """`json.loads(parse_float=...)`: keep an overflowing number as its text, flagged."""
    value = float(text)
    return value if math.isfinite(value) else NonFinite(text)


def parse_constant(name: str) -> NonFinite:
    """`json.loads(parse_constant=...)`: `NaN` / `Infinity` are not JSON numbers."""
    return NonFinite(name)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """A lone surrogate anywhere in `text` (checked in C: every string of every row passes)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _plainly_clean(value: Any) -> bool:
    """True when `value` certainly holds no hazard; False sends it to the full walk, which
    finds (and names) the first one. Every row passes here, so no dotted path is built: on a
    corpus, building a path per value was most of the loaders' time (issue 39)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        kind = type(item)
        if kind is dict:
            for key, inner in item.items():
                if type(key) is not str or has_surrogate(key):
                    return False
                stack.append((inner, depth + 1))
        elif kind is list:
            stack.extend((inner, depth + 1) for inner in item)
        elif kind is str:
            if has_surrogate(item) or len(item) > MAX_STRING_CHARS:
                return False
        elif kind is int:
            if not -INT_LIMIT <= item < INT_LIMIT:
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif item is not None and kind is not bool:  # NonFinite, tuples, anything else
            return False
    return True


def find_hazard(value: Any, root: str = "") -> tuple[str, str] | None:
    """(dotted field, why) of the first value that cannot be stored as read, else None."""
    if _plainly_clean(value):
        return None
    stack: list[tuple[Any, str, int]] = [(value, root, 0)]
    while stack:
        item, path, depth = stack.pop()
        where = path or "(row)"
        if depth > MAX_DEPTH:
            return where, f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(item, NonFinite):
            if item in ("NaN", "Infinity", "-Infinity"):
                return where, f"{item} is not a JSON number"
            return where, f"number {str(item)[:40]} overflows a float (not stored as infinity)"
        if isinstance(item, str):
            if has_surrogate(item):
                return where, "text holds a lone UTF-16 surrogate (not valid Unicode)"
            if len(item) > MAX_STRING_CHARS:
                return where, f"is {len(item)} characters; the limit is {MAX_STRING_CHARS}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return where, f"number {item!r} is not finite (not stored as null or Infinity)"
        elif isinstance(item, int) and not isinstance(item, bool):
            if not -INT_LIMIT <= item < INT_LIMIT:
                return where, "integer does not fit in 64 bits"
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                name = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and has_surrogate(key):
                    return name, "key holds a lone UTF-16 surrogate (not valid Unicode)"
                stack.append((inner, name, depth + 1))
        elif isinstance(item, (list, tuple)):
            for i in reversed(range(len(item))):
                stack.append((item[i], f"{path}.{i}" if path else str(i), depth + 1))
    return None
