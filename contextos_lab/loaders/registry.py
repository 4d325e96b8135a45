"""Trace loaders by name: the kinds `loaders.detect` recognises, plus installed plug-ins.

`cluster` and notebook 01 read each file with the loader of the kind its content shows
(`insights.sources.loader_for`), or every file with the one `cluster --loader` / notebook 01's
`loader` parameter names; a loader for another format is installed under the entry-point group
`contextos_lab.loaders` or named as `package.module:function`, and checked with
`contextos_lab.testing.LoaderContract`. See `contextos_lab.plugins`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

from contextos_lab.loaders.detect import SPAN_EXPORTS
from contextos_lab.loaders.otlp import TraceLoadResult
from contextos_lab.plugins import Registry

#: `(paths) -> TraceLoadResult`: records, their traces, feedback and quarantined rows.
TraceLoader = Callable[[Sequence[Path]], TraceLoadResult]

#: Entry-point group an installed plug-in declares its trace loaders under.
GROUP = "contextos_lab.loaders"


def _lazy(module: str, attr: str) -> Callable[[], TraceLoader]:
    """Imported on first use: the Inspect reader pulls in inspect-ai only when needed."""

    def factory() -> TraceLoader:
        loader: TraceLoader = getattr(importlib.import_module(module), attr)
        return loader

    return factory


_EXPORTS = _lazy("contextos_lab.loaders.exports", "load_exports")

TRACE_LOADERS: Registry[TraceLoader] = Registry(
    "trace loader",
    GROUP,
    callable,
    {
        "tau-bench": _lazy("contextos_lab.loaders.tau_bench", "load_tau_bench"),
        "who-and-when": _lazy("contextos_lab.loaders.who_and_when", "load_who_and_when"),
        # OTLP/JSON goes through the export reader too, so its OpenInference / GenAI
        # attributes are read like every other tool's (`loaders.conventions`)
        "otlp": _EXPORTS,
        "inspect": _lazy("contextos_lab.loaders.inspect_logs", "load_inspect"),
        **dict.fromkeys(SPAN_EXPORTS, _EXPORTS),
    },
)


def get_loader(ref: str) -> TraceLoader:
    """The trace loader `ref` names: a kind, an installed plug-in or `module:function`."""
    return TRACE_LOADERS.get(ref)


__all__ = ["GROUP", "TRACE_LOADERS", "TraceLoader", "get_loader"]
