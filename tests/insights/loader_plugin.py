"""A trace loader from outside the kit, named by `package.module:function` in the tests of
`cluster --loader`: its files hold one Who&When run under a key no built-in format knows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from contextos_lab.loaders.otlp import TraceLoadResult
from contextos_lab.loaders.who_and_when import NO_CLOCK, load_runs

#: The paths of each call, in the process that made it.
CALLS: list[list[str]] = []


def load_wrapped(paths: Sequence[Path]) -> TraceLoadResult:
    CALLS.append([str(p) for p in paths])
    runs = [json.loads(Path(p).read_text(encoding="utf-8"))["wrapped_run"] for p in paths]
    return load_runs(runs, "wrapped", [NO_CLOCK] * len(runs))
