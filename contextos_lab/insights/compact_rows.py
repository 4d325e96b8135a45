"""A corpus' decision records as Arrow columns holding only what the cluster analysis reads.

`RunRows` kept one Python object per value of every run (ids, a dict of inputs, a tuple of
tool calls): about 2 KB a run, and, being small objects made while each trace was read, spread
over the allocator's arenas, so that the parent's memory grew by several KB a run (docs/scale.md,
"No object per run while reading"). Here `extend` keeps a block of runs as Python values, then
moves it into an Arrow table (`pyarrow`: contiguous buffers, a few per block), so what a run
leaves behind is its bytes. `inputs` is cut to `ANALYSIS_INPUTS` (the action diff to the shape
`attribution.runs.diff_shape` reads) and held, with the tool calls and evidence references, as
JSON text; the frame decodes each distinct text of the column once, so equal values are one object.
The frame equals `RunRows(records).frame()` but for those inputs (and tuples for lists).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from contextos_lab.insights.block_file import BlockFile
from contextos_lab.insights.run_rows import RunRows
from contextos_lab.schemas.base import columns_to_frame, frame_dtypes
from contextos_lab.schemas.decision import DecisionRecord

if TYPE_CHECKING:
    import pandas as pd

#: The `inputs` keys the cluster analysis reads: the runs frame (`runs.columns`: failed,
#: reason_class, expected_decision, mistake_agent, phase), the rules (`runs.rules`: task_id,
#: annotation_flag), the source families (`findings.families`: source) and the attribution row
#: (`attribution.runs.attribution_frame`: action_diff, mistake_agent, mistake_step).
ANALYSIS_INPUTS = (
    "failed",
    "reason_class",
    "expected_decision",
    "mistake_agent",
    "mistake_step",
    "phase",
    "task_id",
    "annotation_flag",
    "source",
    "action_diff",
)
#: The frame column of the inputs' task id, apart from them (`CompactRows.frame`).
TASK_ID = "task_id"
#: The record columns the cluster analysis reads (`runs.columns.runs_frame`, `runs.rules`,
#: `runs.insights`, the attribution and feedback steps of `pipeline.analyse`): a corpus' frame
#: is built with these only.
ANALYSIS_COLUMNS = (
    "record_id",
    "trace_id",
    "decision_key",
    "status",
    "decided_at",
    "inputs",
    TASK_ID,
    "tool_calls",
    "evidence_refs_missing",
)
#: The action diff's parts whose presence `attribution.runs.diff_shape` reads.
DIFF_PARTS = ("missing", "extra", "wrong_arguments")
#: Runs kept as Python values before they move into an Arrow block.
BLOCK = 256
#: Distinct JSON texts turned into Python strings at a time.
_SLICE = 4096
_DTYPES = frame_dtypes(DecisionRecord)
#: A block's cells: the record's columns, and its inputs' task id apart from the inputs.
_CELLS = (*_DTYPES, TASK_ID)
#: Cells held as JSON text (objects in the frame), and those decoded to tuples.
_JSON = frozenset(n for n, d in _DTYPES.items() if d == "object") | {TASK_ID}
_TUPLES = frozenset({"evidence_refs", "evidence_refs_missing", "tool_calls"})
_SCHEMA = pa.schema(
    [
        (n, pa.timestamp("us", tz="UTC") if d.startswith("datetime64") else pa.string())
        for n, d in (*_DTYPES.items(), (TASK_ID, "object"))
    ]
)


def analysis_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a record's `inputs` the analysis reads (keys absent stay absent)."""
    kept = {k: inputs[k] for k in ANALYSIS_INPUTS if k in inputs}
    diff = kept.get("action_diff")
    if isinstance(diff, Mapping):
        kept["action_diff"] = {k: True for k in DIFF_PARTS if diff.get(k)}
    return kept


def _cell(name: str, record: DecisionRecord) -> Any:
    """A record's cell; the task id apart from the inputs (null where they name none), so the
    inputs' texts repeat across the runs of a corpus and decode to a few shared dicts."""
    if name == TASK_ID:
        absent = TASK_ID not in record.inputs
        return None if absent else json.dumps(record.inputs[TASK_ID], ensure_ascii=False)
    value = getattr(record, name)
    if name == "inputs":
        kept = analysis_inputs(value)
        kept.pop(TASK_ID, None)
        return json.dumps(kept, ensure_ascii=False)
    if name in _JSON:
        return json.dumps(list(value), ensure_ascii=False)
    return value.value if isinstance(value, Enum) else value


class CompactRows(RunRows):
    """`RunRows` for a corpus: appended with `extend`, read as a frame (see the module)."""

    def __init__(self, records: Iterable[DecisionRecord] = ()) -> None:
        self._blocks = BlockFile(_SCHEMA)  # on disk: read back a few columns at a time
        self._pending: dict[str, list[Any]] = {n: [] for n in _CELLS}
        super().__init__(records)

    def extend(self, records: Iterable[DecisionRecord]) -> None:
        if isinstance(records, CompactRows) and records._blocks.blocks:  # its blocks as they are
            self._seal()
            records._seal()
            self._blocks.extend(records._blocks)
            return
        if isinstance(records, CompactRows):  # a worker's cells, moved: not made again here
            for name, column in self._pending.items():
                column.extend(records._pending[name])
        else:
            for record in records:
                for name, column in self._pending.items():
                    column.append(_cell(name, record))
                if len(self._pending["record_id"]) >= BLOCK:
                    self._seal()
        if len(self._pending["record_id"]) >= BLOCK:
            self._seal()

    def _seal(self) -> None:
        """The pending runs moved into an Arrow block, written to disk."""
        if self._pending["record_id"]:
            self._blocks.append(pa.RecordBatch.from_pydict(self._pending, schema=_SCHEMA))
            self._pending = {n: [] for n in _CELLS}

    def table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The runs' cells (only `columns`, all when None), read back from disk."""
        self._seal()
        return self._blocks.table(columns)

    def __len__(self) -> int:
        return len(self._blocks) + len(self._pending["record_id"])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = self.table().slice(index % len(self), 1).to_pylist()[0]
        task = row.pop(TASK_ID)
        for name in _JSON - {TASK_ID}:
            row[name] = json.loads(row[name])
        if task is not None:
            row["inputs"] = _with_task(row["inputs"], json.loads(task))
        return DecisionRecord.model_validate(row)

    def trace_ids(self) -> list[str]:
        return self.table(["trace_id"]).column("trace_id").to_pylist()

    def frame(
        self, since: datetime | None = None, columns: Sequence[str] | None = None
    ) -> pd.DataFrame:
        """The runs' frame (only `columns`, all when None), read from disk a column at a time:
        a JSON column's text is held only while it is decoded. `TASK_ID` among `columns`: the
        inputs' task id is a column of its own, not in the inputs, so that runs whose inputs
        differ only by it share one inputs dict (tau-bench names a task per run)."""
        names = list(_DTYPES) if columns is None else list(columns)
        merge = "inputs" in names and TASK_ID not in names  # the inputs as the record has them
        values: dict[str, Any] = {}
        for name in [*names, TASK_ID] if merge else names:
            column = self.table([name]).column(name)
            values[name] = _decoded(column, name) if name in _JSON else _values(column)
            if merge and name == TASK_ID:
                present = pc.is_valid(column).to_numpy(zero_copy_only=False)
                tasks = values.pop(TASK_ID)
                values["inputs"] = [
                    _with_task(d, t) if p else d
                    for d, t, p in zip(values["inputs"], tasks, present, strict=True)
                ]
        frame = columns_to_frame(values, DecisionRecord)
        if since is None:
            return frame
        return frame[frame["decided_at"] >= since].reset_index(drop=True)


def _with_task(inputs: dict[str, Any], task: Any) -> dict[str, Any]:
    """The inputs with their task id back, in `analysis_inputs`' order."""
    whole = {**inputs, TASK_ID: task}
    return {k: whole[k] for k in ANALYSIS_INPUTS if k in whole}


def _values(column: pa.ChunkedArray) -> Any:
    """A string or time column as the frame takes it, without a Python object per run: Arrow."""
    import pandas as pd

    if pa.types.is_timestamp(column.type):
        return column.to_pandas()
    return pd.Series(pd.arrays.ArrowStringArray(column))


def _decoded(column: pa.ChunkedArray, name: str) -> Any:
    """Each distinct JSON text decoded once (a slice of them at a time, never all as Python
    strings at once); nested values and strings equal across texts shared too: a corpus
    repeats its sources, classes and diff shapes. Nulls (no task id) stay None."""
    import numpy as np

    distinct = pc.unique(column)
    objects = np.empty(len(distinct), dtype=object)
    shared: tuple[dict[str, str], dict[str, Any]] = ({}, {})  # strings; lists and dicts
    for start in range(0, len(distinct), _SLICE):
        texts = distinct.slice(start, _SLICE).to_pylist()
        for i, text in enumerate(texts, start):  # one by one: never a 2-D array
            objects[i] = None if text is None else _decode(json.loads(text), name, shared)
    return objects[pc.index_in(column, value_set=distinct).to_numpy(zero_copy_only=False)]


def _decode(value: Any, name: str, shared: tuple[dict[str, str], dict[str, Any]]) -> Any:
    if name in _TUPLES:
        return tuple(_share(v, shared) for v in value)
    if isinstance(value, dict):  # keys shared too: each decoded dict had its own
        return {shared[0].setdefault(k, k): _share(v, shared) for k, v in value.items()}
    return value


def _share(value: Any, shared: tuple[dict[str, str], dict[str, Any]]) -> Any:
    """One object for equal strings, dicts and lists among the decoded texts (never
    mutated: the analysis only reads them)."""
    if isinstance(value, str):  # not `sys.intern`: its table would keep every task id
        return shared[0].setdefault(value, value)
    if isinstance(value, dict | list):
        return shared[1].setdefault(json.dumps(value, ensure_ascii=False), value)
    return value


__all__ = [
    "ANALYSIS_COLUMNS",
    "ANALYSIS_INPUTS",
    "BLOCK",
    "DIFF_PARTS",
    "TASK_ID",
    "CompactRows",
    "analysis_inputs",
]
