"""The replay gate (seed 000 Step 4): goldens, their recording, and replaying a policy patch
or an adjustment-layer rule on them.

Before the relayout `contextos_lab.proposals.replay` was the module now at `replay.replay`;
its names still resolve here, with a DeprecationWarning (use `contextos_lab.api`).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = [
    "golden_recording",
    "goldens",
    "layers",
    "replay",
]
#: The public names of the old `proposals/replay.py`.
_OLD_NAMES = frozenset(
    {
        "EVALUATORS",
        "BaselineDrift",
        "ReplayResult",
        "unsafe_approval",
        "score_decision",
        "replay_decision_record",
        "check_reproduces",
        "replay_rows",
        "expected_missed",
        "replay_frame",
        "resolve_baseline",
        "build_verdict",
        "run_replay_gate",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _OLD_NAMES:
        raise AttributeError(f"module 'contextos_lab.proposals.replay' has no attribute {name!r}")
    warnings.warn(
        f"contextos_lab.proposals.replay.{name} is now in contextos_lab.proposals.replay.replay:"
        " import it from contextos_lab.api",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("contextos_lab.proposals.replay.replay"), name)
