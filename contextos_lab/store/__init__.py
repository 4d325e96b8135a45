"""Append-only, hash-chained experience store (SQLite by default, any SQLAlchemy URL).

Names load on first use (PEP 562): `contextos_lab.store.db_url` and the CLI's `--help` stay
free of SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import Any

# eager (it is light): the function must shadow the submodule of the same name
from contextos_lab.store.lineage import LineageNode, lineage

_WHERE = {
    "DEFAULT_STORE_URL": "contextos_lab.store.experience_store",
    "AppendOutcome": "contextos_lab.store.experience_store",
    "ExperienceStore": "contextos_lab.store.experience_store",
    "StoredRow": "contextos_lab.store.experience_store",
    "StoreRefusal": "contextos_lab.store.experience_store",
    "VerifyReport": "contextos_lab.store.experience_store",
}
__all__ = ["LineageNode", "lineage", *sorted(_WHERE)]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'contextos_lab.store' has no attribute {name!r}")
