"""Append-only, hash-chained experience store (SQLite by default, any SQLAlchemy URL)."""

from contextos_lab.store.experience_store import (
    DEFAULT_STORE_URL,
    AppendOutcome,
    ExperienceStore,
    StoredRow,
    StoreRefusal,
    VerifyReport,
)
from contextos_lab.store.lineage import LineageNode, lineage

__all__ = [
    "DEFAULT_STORE_URL",
    "AppendOutcome",
    "ExperienceStore",
    "LineageNode",
    "StoreRefusal",
    "StoredRow",
    "VerifyReport",
    "lineage",
]
