"""A corpus' decision records kept as the runs frame's columns, not one model object per run.

`cluster` on 100,000 traces held every run's `DecisionRecord` until the analysis: a pydantic
object (its `__dict__`, its fields-set) of about 1.5 KB beside its values. The analysis reads
the records only as a frame (`runs.columns.runs_frame`), so the corpus reader appends each
batch's records to plain columns (`schemas.base.frame_columns`) and drops the objects; the
frame is built from the columns, equal to `EnvelopeList(records).to_frame()`. A record is
rebuilt on demand for whoever still iterates the records.

`compact=True` (`insights.corpus`) keeps only what the analysis reads, so a run costs about a
pointer per column: `inputs` cut to `ANALYSIS_INPUTS` (the action diff to the shape
`attribution.runs.diff_shape` reads), repeated strings, tool paths and inputs held once
(`insights.interned`), and sequences as tuples. Its frame and records carry those inputs, not
the loader's whole dict (docs/scale.md, "How fast, how much memory").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, overload

from contextos_lab.insights.interned import LIMIT, Interner
from contextos_lab.schemas.base import columns_to_frame, frame_columns, frame_dtypes
from contextos_lab.schemas.decision import DecisionRecord

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
#: The action diff's parts whose presence `attribution.runs.diff_shape` reads.
DIFF_PARTS = ("missing", "extra", "wrong_arguments")

if TYPE_CHECKING:
    import pandas as pd


class RunRows(Sequence[DecisionRecord]):
    """Decision records as columns: appended with `extend` (as a list is), read as a frame."""

    def __init__(self, records: Iterable[DecisionRecord] = (), *, compact: bool = False) -> None:
        self.columns: dict[str, list[Any]] = {n: [] for n in frame_dtypes(DecisionRecord)}
        self.compact = compact
        self._interned = {n: Interner() for n in self.columns}
        self._inputs: dict[Any, dict[str, Any]] = {}
        self.extend(records)

    def extend(self, records: Iterable[DecisionRecord]) -> None:
        if not self.compact:
            frame_columns(records, DecisionRecord, self.columns)
            return
        for record in records:
            for name, column in self.columns.items():
                value = getattr(record, name)
                if name == "inputs":
                    column.append(self._projected(value))
                    continue
                if isinstance(value, Enum):
                    value = value.value
                column.append(self._interned[name](value))

    def _projected(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The analysis' part of `inputs`, one dict per distinct value (read, never changed)."""
        value = self._interned["inputs"]
        kept = {k: value(inputs[k]) for k in ANALYSIS_INPUTS if k in inputs}
        diff = kept.get("action_diff")
        if isinstance(diff, Mapping):
            kept["action_diff"] = {k: True for k in DIFF_PARTS if diff.get(k)}
        # the type beside each value: `failed: 1` is not `failed: True` (`is True` is read)
        key = tuple(
            (k, type(v), tuple(v.items()) if isinstance(v, dict) else v) for k, v in kept.items()
        )
        try:
            return self._inputs[key]
        except KeyError:
            if len(self._inputs) < LIMIT:
                self._inputs[key] = kept
            return kept
        except TypeError:  # a value that is not hashable (a list): kept as it is
            return kept

    def __len__(self) -> int:
        return len(self.columns["record_id"])

    @overload
    def __getitem__(self, index: int) -> DecisionRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[DecisionRecord]: ...

    def __getitem__(self, index: int | slice) -> DecisionRecord | Sequence[DecisionRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return DecisionRecord.model_validate({n: c[index] for n, c in self.columns.items()})

    def __iter__(self) -> Iterator[DecisionRecord]:
        return (self[i] for i in range(len(self)))

    def trace_ids(self) -> list[str]:
        return self.columns["trace_id"]

    def frame(self, since: datetime | None = None) -> pd.DataFrame:
        """`EnvelopeList(records, DecisionRecord).to_frame()` of the records decided at or after
        `since` (all when None)."""
        frame = columns_to_frame(self.columns, DecisionRecord)
        if since is None:
            return frame
        keep = [d >= since for d in self.columns["decided_at"]]
        return frame[keep].reset_index(drop=True)


__all__ = ["ANALYSIS_INPUTS", "DIFF_PARTS", "RunRows"]
