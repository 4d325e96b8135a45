"""Loaders: JSONL, JSON, CSV and Parquet files of decisions, feedback and scorecards to typed
envelopes, with every refused row quarantined (file, line, field, message)."""

from contextos_lab.loaders.ingest import IngestReport, ingest_file, store_loaded
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
