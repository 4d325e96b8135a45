"""Import paths in use before the relayout, kept so a domain's scripts written before it still
run (docs/api.md): a module left at an old path warns once, when imported, and reads every name
from the module's new place. One mechanism for every such path."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def moved_module(old: str, new: str) -> Callable[[str], Any]:
    """Warn (at the importer of `old`) that `old` is now `new`, and return the module
    `__getattr__` that resolves each name from `new`, imported only when a name is asked for."""
    warnings.warn(
        f"{old} is now {new}: import from contextos_lab.api", DeprecationWarning, stacklevel=3
    )

    def resolve(name: str) -> Any:
        return getattr(importlib.import_module(new), name)

    return resolve
