"""A corpus' decision records kept as the runs frame's columns, not one model object per run.

`cluster` on 100,000 traces held every run's `DecisionRecord` until the analysis: a pydantic
object (its `__dict__`, its fields-set) of about 1.5 KB beside its values. The analysis reads
the records only as a frame (`runs.columns.runs_frame`), so the corpus reader appends each
batch's records to plain columns (`schemas.base.frame_columns`) and drops the objects; the
frame is built from the columns, equal to `EnvelopeList(records).to_frame()`. A record is
rebuilt on demand for whoever still iterates the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from contextos_lab.schemas.base import columns_to_frame, frame_columns, frame_dtypes
from contextos_lab.schemas.decision import DecisionRecord

if TYPE_CHECKING:
    import pandas as pd


class RunRows(Sequence[DecisionRecord]):
    """Decision records as columns: appended with `extend` (as a list is), read as a frame."""

    def __init__(self, records: Iterable[DecisionRecord] = ()) -> None:
        self.columns: dict[str, list[Any]] = {n: [] for n in frame_dtypes(DecisionRecord)}
        self.extend(records)

    def extend(self, records: Iterable[DecisionRecord]) -> None:
        frame_columns(records, DecisionRecord, self.columns)

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


__all__ = ["RunRows"]
