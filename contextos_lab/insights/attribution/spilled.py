"""Attribution rows of a corpus with their variable-size fields on disk until the report is
written.

`insights.json` carries one attribution row per failed search-split run, with a 300-character
excerpt, the top-k candidate steps and the evidence steps; the analysis (mechanism clusters,
their insights) reads none of those, only the row's fixed-size fields (role, act, flags,
ending, agent). So `cluster` writes each row as one JSON line to an anonymous temporary file
(gone when closed, or when the process ends however it ends) and keeps only its offset; the
analysis reads the rows back (the fixed-size fields, with a `Spilled` marker in each spilled
column), and `fill` puts the spilled values back, a chunk of rows at a time, when the report
is written (`ClusterReport.parts`). JSON lines with their offsets, not Parquet: the rows are
read back one by one in the report's order (per source), not the order they were written, and
their nested values go back exactly as they came.
"""

from __future__ import annotations

import json
import sys
import tempfile
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

#: The row's fields whose size grows with the run (text, lists), read only when written.
SPILLED = ("signals", "excerpt", "error_steps", "loop_steps", "stall_steps", "candidates")


class Spilled:
    """A frame cell standing for a field kept on disk: the row's line in the spill file."""

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line


class SpilledAttributions(Mapping[str, "dict[str, Any] | None"]):
    """Trace id → attribution row (as `attribution.runs.trace_attribution` returned it, or
    None), read from disk with the `SPILLED` fields as `Spilled` markers until `fill`.

    While a corpus is read only each line's offset is kept (8 bytes a run); the index from
    trace id to line is built at the first look-up, once the corpus is read."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the rows are
        self._offsets = array("q")
        self._groups = array("q")
        self._made = 0  # groups handed out
        self._index: dict[str, int] | None = None  # trace id -> line, built when first read

    def group(self) -> int:
        """A new group, ranked after every earlier one (see `put`)."""
        self._made += 1
        return self._made

    def put(self, trace_id: str, row: Mapping[str, Any] | None, group: int = 0) -> None:
        """Keep a run's row. Rows are taken in (group, order put), as `dict.update` per group
        in group order would: a later row of the same trace id replaces an earlier one, and
        keeps its place."""
        self._file.seek(0, 2)
        self._offsets.append(self._file.tell())
        self._groups.append(group)
        line = json.dumps([trace_id, row], ensure_ascii=False).encode("utf-8")
        self._file.write(line + b"\n")
        self._index = None

    def update(self, rows: Mapping[str, Mapping[str, Any] | None]) -> None:
        group = self.group()
        for trace_id, row in rows.items():
            self.put(trace_id, row, group)

    def _read(self, line: int) -> tuple[str, dict[str, Any] | None]:
        self._file.seek(self._offsets[line])
        trace_id, row = json.loads(self._file.readline())
        return trace_id, row

    def _lines(self) -> dict[str, int]:
        if self._index is None:
            lines = sorted(range(len(self._offsets)), key=lambda i: (self._groups[i], i))
            self._index = {self._read(i)[0]: i for i in lines}
        return self._index

    def __getitem__(self, trace_id: str) -> dict[str, Any] | None:
        line = self._lines()[trace_id]
        row = self._read(line)[1]
        if row is None:
            return None
        marker = Spilled(line)
        # a corpus repeats its agents, acts and endings: each distinct text held once
        kept = {k: sys.intern(v) if type(v) is str else v for k, v in row.items()}
        return {**kept, **{k: marker for k in SPILLED if k in row}}

    def whole(self, trace_id: str) -> dict[str, Any] | None:
        """The row with its spilled fields read back."""
        return self._read(self._lines()[trace_id])[1]

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines())

    def __len__(self) -> int:
        return len(self._lines())

    def fill(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`rows` (records of a frame built from these rows) with their markers replaced."""
        for row in rows:
            marker = next((v for v in row.values() if isinstance(v, Spilled)), None)
            if marker is not None:
                whole = self._read(marker.line)[1] or {}
                row.update({k: whole.get(k) for k in SPILLED if k in row})
        return rows

    def close(self) -> None:
        self._file.close()


__all__ = ["SPILLED", "Spilled", "SpilledAttributions"]
