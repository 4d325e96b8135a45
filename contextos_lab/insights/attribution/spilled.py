"""Attribution rows of a corpus with their variable-size fields on disk until the report is
written.

`insights.json` carries one attribution row per failed search-split run, with a 300-character
excerpt, the top-k candidate steps and the evidence steps; the analysis (mechanism clusters,
their insights) reads none of those, only the row's fixed-size fields (role, act, flags,
ending, agent). So `cluster` keeps those fields in memory, each repeated value once
(`insights.interned`), and writes the rest as one JSON line per run to an anonymous temporary
file (gone when closed, or when the process ends however it ends). A frame built from these
rows holds a `Spilled` marker in each spilled column; `fill` puts the values back, a chunk of
rows at a time, when the report is written (`ClusterReport.parts`). JSON lines with their
offsets, not Parquet: the rows are read back one by one in the report's order (per source),
not the order they were written, and their nested values go back exactly as they came.
"""

from __future__ import annotations

import json
import tempfile
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

from contextos_lab.insights.interned import Interner

#: The row's fields whose size grows with the run (text, lists), read only when written.
SPILLED = ("signals", "excerpt", "error_steps", "loop_steps", "stall_steps", "candidates")


class Spilled:
    """A frame cell standing for a field kept on disk: the row's line in the spill file."""

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line


class SpilledAttributions(Mapping[str, "dict[str, Any] | None"]):
    """Trace id → attribution row (as `attribution.runs.trace_attribution` returned it, or
    None), the `SPILLED` fields standing as `Spilled` markers until `fill` reads them."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the rows are
        self._offsets = array("q")
        self._index: dict[str, int] = {}  # trace id -> line (-1: nothing to blame)
        self._kept: list[tuple[tuple[str, ...], tuple[Any, ...]]] = []
        self._interned = Interner()

    def put(self, trace_id: str, row: Mapping[str, Any] | None) -> None:
        """Keep a run's row (a later row of the same trace id replaces it, as a dict would)."""
        if row is None:
            self._index[trace_id] = -1
            return
        keys = self._interned(tuple(k for k in row if k not in SPILLED))
        values = tuple(self._interned(row[k]) for k in keys)
        self._file.seek(0, 2)
        self._offsets.append(self._file.tell())
        spilled = [row.get(k) for k in SPILLED]
        self._file.write(json.dumps(spilled, ensure_ascii=False).encode("utf-8") + b"\n")
        self._index[trace_id] = len(self._kept)
        self._kept.append((keys, values))

    def __getitem__(self, trace_id: str) -> dict[str, Any] | None:
        line = self._index[trace_id]
        if line < 0:
            return None
        keys, values = self._kept[line]
        marker = Spilled(line)
        return {**dict(zip(keys, values, strict=True)), **dict.fromkeys(SPILLED, marker)}

    def update(self, rows: Mapping[str, Mapping[str, Any] | None]) -> None:
        for trace_id, row in rows.items():
            self.put(trace_id, row)

    def whole(self, trace_id: str) -> dict[str, Any] | None:
        """The row with its spilled fields read back."""
        row = self[trace_id]
        return None if row is None else self.fill([row])[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def spilled(self, line: int) -> dict[str, Any]:
        """The `SPILLED` fields of a row, read back from disk."""
        self._file.seek(self._offsets[line])
        return dict(zip(SPILLED, json.loads(self._file.readline()), strict=True))

    def fill(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`rows` (records of a frame built from these rows) with their markers replaced."""
        for row in rows:
            marker = next((v for v in row.values() if isinstance(v, Spilled)), None)
            if marker is not None:
                row.update({k: v for k, v in self.spilled(marker.line).items() if k in row})
        return rows

    def close(self) -> None:
        self._file.close()


__all__ = ["SPILLED", "Spilled", "SpilledAttributions"]
