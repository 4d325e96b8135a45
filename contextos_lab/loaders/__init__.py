"""Loaders: JSONL, JSON, CSV and Parquet files of decisions, feedback and scorecards to typed
envelopes, with every refused row quarantined (file, line, field, message).

`ingest_file`, `store_loaded` and `IngestReport` load on first use (PEP 562): they bring the
store (SQLAlchemy), which reading rows does not need.
"""

from __future__ import annotations

from typing import Any

from contextos_lab.loaders.quarantine import (
    LoadResult,
    QuarantinedRow,
    quarantine_path,
    write_quarantine,
)
from contextos_lab.loaders.readers import FORMATS, Loader, UnreadableSource, open_rows
from contextos_lab.loaders.records import KINDS, MAX_STRING_CHARS, RecordLoader, load_records

__all__ = [
    "FORMATS",
    "KINDS",
    "MAX_STRING_CHARS",
    "IngestReport",
    "LoadResult",
    "Loader",
    "QuarantinedRow",
    "RecordLoader",
    "UnreadableSource",
    "ingest_file",
    "load_records",
    "open_rows",
    "quarantine_path",
    "store_loaded",
    "write_quarantine",
]
_INGEST = ("IngestReport", "ingest_file", "store_loaded")


def __getattr__(name: str) -> Any:
    if name in _INGEST:
        from contextos_lab.loaders import ingest

        return getattr(ingest, name)
    raise AttributeError(f"module 'contextos_lab.loaders' has no attribute {name!r}")
