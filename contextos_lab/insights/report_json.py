"""`insights.json` written piece by piece: the same bytes as `canonical_json(report.to_json())`,
without the whole report as one dict and one string in memory.

A corpus of 100,000 traces has tens of thousands of attribution rows; as one `to_dict` and one
`json.dumps` they cost several KB a trace at once (docs/scale.md, "How fast, how much memory").
Here each top-level key is written in sorted order and each list item by item (frames a chunk
of rows at a time), so what is held beyond the report is bounded by a chunk. The standard
library's encoder writes every item; only the joining is ours, with canonical JSON's separators.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from contextos_lab.schemas.base import canonical_json

if TYPE_CHECKING:
    import pandas as pd

#: Rows of a frame turned into dicts at a time.
CHUNK = 1000
#: Completes a chunk of a frame's rows before they are written.
Fill = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class Items:
    """A list written item by item (`factory` makes a fresh iterator each time it is read)."""

    def __init__(self, factory: Callable[[], Iterable[Any]]) -> None:
        self.factory = factory

    def __iter__(self) -> Iterator[Any]:
        return iter(self.factory())


def frame_rows(frame: pd.DataFrame, chunk: int = CHUNK, fill: Fill | None = None) -> Items:
    """`frame.to_dict("records")`, a chunk of rows at a time (the same values: pandas boxes
    each one the same way whatever the slice); `fill` completes each chunk's rows (values
    kept on disk until written: `attribution.spilled`)."""

    def rows() -> Iterator[dict[str, Any]]:
        for start in range(0, len(frame), chunk):
            part = frame.iloc[start : start + chunk].to_dict("records")
            yield from (fill(part) if fill is not None else part)

    return Items(rows)


def dumped(models: Iterable[Any]) -> Items:
    """Pydantic models' `model_dump(mode="json")`, one at a time."""
    return Items(lambda: (m.model_dump(mode="json") for m in models))


def as_dict(parts: dict[str, Any]) -> dict[str, Any]:
    """The parts as one plain dict (`ClusterReport.to_json`)."""
    return {k: list(v) if isinstance(v, Items) else v for k, v in parts.items()}


def write_parts(parts: dict[str, Any], out: TextIO) -> None:
    """`canonical_json(as_dict(parts))` written to `out` piece by piece (sorted keys, compact
    separators, non-ASCII as UTF-8)."""
    out.write("{")
    for i, key in enumerate(sorted(parts)):
        out.write(("," if i else "") + json.dumps(key, ensure_ascii=False) + ":")
        value = parts[key]
        if not isinstance(value, Items):
            out.write(canonical_json(value))
            continue
        out.write("[")
        for j, item in enumerate(value):
            out.write(("," if j else "") + canonical_json(item))
        out.write("]")
    out.write("}")


def write_report_json(parts: dict[str, Any], path: Path) -> Path:
    """`insights.json` at `path` from a report's parts (`ClusterReport.parts`), followed by a
    newline, as `write_report` always wrote it."""
    with path.open("w", encoding="utf-8") as out:
        write_parts(parts, out)
        out.write("\n")
    return path


__all__ = [
    "CHUNK",
    "Fill",
    "Items",
    "as_dict",
    "dumped",
    "frame_rows",
    "write_parts",
    "write_report_json",
]
