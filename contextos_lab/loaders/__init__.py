"""Loaders: JSONL, JSON, CSV and Parquet files of decisions, feedback and scorecards to typed
envelopes, with every refused row quarantined (file, line, field, message).

Every name loads on first use (PEP 562): importing a leaf such as `loaders.kinds` (the CLI's
argparse choices) then costs no pydantic, and `ingest_file`, `store_loaded` and `IngestReport`
bring the store (SQLAlchemy) only when asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module (under `contextos_lab.loaders`) that defines it.
_WHERE = {
    "LoadResult": "quarantine",
    "QuarantinedRow": "quarantine",
    "quarantine_path": "quarantine",
    "write_quarantine": "quarantine",
    "FORMATS": "kinds",
    "Loader": "readers",
    "UnreadableSource": "readers",
    "open_rows": "readers",
    "KINDS": "records",
    "MAX_STRING_CHARS": "records",
    "RecordLoader": "records",
    "load_records": "records",
    "IngestReport": "ingest",
    "ingest_file": "ingest",
    "store_loaded": "ingest",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'contextos_lab.loaders' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
