"""One record of a trace file never sinks the file: a per-record guard for the trace loaders.

Trace exports (OTLP, tau-bench, Who&When) are free-form JSON, so any field may hold any type.
The loaders read the shapes they know; this guard turns whatever else escapes while reading one
record (a list where a mapping was expected, a 400-digit timestamp, ...) into a quarantine
entry for that record, and refuses values that cannot be stored as read (`hazards`) first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from contextos_lab.errors import ContextosError
from contextos_lab.loaders.hazards import find_hazard, parse_constant, parse_float
from contextos_lab.loaders.raw_rows import array_items, decode_text

T = TypeVar("T")
Problem = tuple[str | None, str]
#: What reading a wrongly typed or extreme value can raise (never a bug to hide: these are
#: the errors of `int()`, `float()`, `.get` on a non-mapping, iteration of a non-list, ...).
RECORD_ERRORS: tuple[type[BaseException], ...] = (
    TypeError,
    ValueError,
    AttributeError,
    OverflowError,
    RecursionError,
    KeyError,
    IndexError,
    UnicodeError,
)


def read_text(path: Path) -> str:
    """A file's text, decoded by its byte-order mark (`raw_rows.decode_text`); undecodable
    bytes still raise (UnicodeDecodeError: the file is unreadable)."""
    return decode_text(path.read_bytes())


class NestedTooDeep(ContextosError, ValueError):
    """JSON nested deeper than the parser can follow: a ValueError like any other unparsable
    text, typed so that a list file's reader can say which it met."""


def loads(text: str) -> Any:
    """`json.loads` that keeps non-finite numbers flagged (see `hazards`) and reports nesting
    too deep for the parser as `NestedTooDeep`, a ValueError like any other unparsable text."""
    try:
        return json.loads(text, parse_float=parse_float, parse_constant=parse_constant)
    except RecursionError:
        raise NestedTooDeep("JSON nested too deeply to read") from None


class UnreadableItem(ContextosError, ValueError):
    """One element of a list file that cannot be read; `guarded` quarantines it alone."""


def loads_list(text: str) -> Any:
    """`loads`, except that a JSON array one of whose elements is nested too deeply to parse
    is read element by element: each unreadable element becomes an `UnreadableItem` in its
    place (its own quarantine row) and its neighbours load. Other unparsable text raises."""
    try:
        return loads(text)
    except ValueError:
        items = array_items(text)
        if items is None:
            raise
    out: list[Any] = []
    for item in items:
        try:
            out.append(loads(item))
        except ValueError as exc:
            deep = isinstance(exc, NestedTooDeep)
            out.append(UnreadableItem("JSON is nested too deeply to read" if deep else str(exc)))
    return out


def guarded(
    read: Callable[..., tuple[T | None, Problem]], raw: Any, *args: Any
) -> tuple[T | None, Problem]:
    """`read(raw, *args)`, or (None, (field, why)) when `raw` holds a value that cannot be
    stored as read or reading it raised one of RECORD_ERRORS."""
    if isinstance(raw, UnreadableItem):
        return None, (None, str(raw))
    hazard = find_hazard(raw)
    if hazard is not None:
        return None, hazard
    try:
        return read(raw, *args)
    except RECORD_ERRORS as exc:
        why = f"value of an unexpected type or size: {type(exc).__name__}: {str(exc)[:200]}"
        return None, (_blame(lambda r: read(r, *args), raw), why)


def _blame(read: Callable[[Any], Any], raw: Any, path: str = "") -> str | None:
    """The dotted field whose removal lets `read` through: the value it could not read.

    Found by deleting one key at a time (the idea of delta debugging), descending into the
    culprit while it is itself an object, so the loaders need no bookkeeping of their own.
    A key whose removal lets the record load is preferred to one whose removal merely makes
    the loader complain that this very key is missing (that key may just be required)."""
    if not isinstance(raw, Mapping):
        return path or None
    ranked: list[tuple[int, str, Any]] = []
    for key in list(raw):
        name = f"{path}.{key}" if path else str(key)
        value = raw[key]
        emptied: list[Any] | dict[str, Any] = [] if isinstance(value, list) else {}
        if isinstance(value, (list, Mapping)) and value and _loads(read, raw, key, emptied):
            ranked.append((0, name, key))  # emptying it (rather than removing it) lets it load
            continue
        outcome = _outcome(read, {k: v for k, v in raw.items() if k != key})
        if outcome == "raises":
            continue
        rank = 0 if outcome == "loads" else 2 if outcome == str(key) else 1
        ranked.append((rank, name, key))
    if not ranked:
        return path or None
    _, name, key = min(ranked, key=lambda r: r[0])
    inner = raw[key]
    if isinstance(inner, Mapping) and inner:
        return _blame(lambda sub: read({**raw, key: sub}), inner, name) or name
    return name


def _loads(read: Callable[[Any], Any], raw: Mapping[str, Any], key: str, value: Any) -> bool:
    return _outcome(read, {**raw, key: value}) == "loads"


def _outcome(read: Callable[[Any], Any], raw: Any) -> str | None:
    """ "raises", "loads", or the field a refusal names (None when it names none)."""
    try:
        made, problem = read(raw)
    except RECORD_ERRORS:
        return "raises"
    return "loads" if made is not None else problem[0]
