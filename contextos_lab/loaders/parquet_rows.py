"""Parquet rows read batch by batch; a null is an absent field, so the model's default applies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.loaders.quarantine import clip
from contextos_lab.loaders.raw_rows import RawRow, UnreadableSource, json_text

if TYPE_CHECKING:  # pyarrow (and numpy) only when a Parquet file is read
    import pyarrow.parquet as pq

_PARQUET_BATCH = 1024


def _parquet_rows(path: Path) -> Iterator[RawRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableSource(path, f"not a readable Parquet file: {exc}") from None
    return _parquet_batches(path, parquet)


def _parquet_batches(path: Path, parquet: pq.ParquetFile) -> Iterator[RawRow]:
    import pyarrow as pa

    number = 0
    try:
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH):
            for row in batch.to_pylist():
                number += 1
                yield RawRow(number, clip(json_text(row)), data=_drop_nulls(row))
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableSource(path, f"Parquet data unreadable after row {number}: {exc}") from None


def _drop_nulls(value: dict[str, Any]) -> dict[str, Any]:
    return {
        k: _drop_nulls(v) if isinstance(v, dict) else v for k, v in value.items() if v is not None
    }
