"""Deprecated path: `contextos_lab.proposals.policy_bundle` moved to `proposals.policy.bundle`
in the relayout. Kept so a domain's scripts written before it still run; import from
`contextos_lab.api` instead (its names do not move)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED_TO = "contextos_lab.proposals.policy.bundle"
warnings.warn(
    f"contextos_lab.proposals.policy_bundle is now {_MOVED_TO}: import from contextos_lab.api",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    return getattr(importlib.import_module(_MOVED_TO), name)
