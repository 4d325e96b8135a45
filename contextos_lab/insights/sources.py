"""Loading sources for one analysis: paths sniffed by content (tau-bench trajectories, Who&When
annotations, OTLP/JSON, OTel SDK, Phoenix, Langfuse, LangSmith and MLflow exports, Inspect logs:
see `loaders.detect`), one named loader for every file, or `synthetic[:N[:SEED]]` for the bundled
generator. Kept apart from `insights.pipeline` (the analysis) so reading and analysing are
separate concerns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.insights.attribution.spilled import SpilledAttributions
from contextos_lab.insights.run_rows import RunRows
from contextos_lab.loaders.detect import detect, files_of, group_by_kind, why_unknown
from contextos_lab.loaders.exports import EXPECTED
from contextos_lab.loaders.otlp import Trace, TraceLoadResult, new_result
from contextos_lab.loaders.quarantine import QuarantinedRow
from contextos_lab.loaders.registry import get_loader
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry


@dataclass
class Loaded:
    #: A list, or (`insights.corpus`, a whole corpus) the records kept as columns.
    records: list[DecisionRecord] | RunRows = field(default_factory=list)
    feedback: list[FeedbackEntry] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    quarantined: list[QuarantinedRow] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    #: Trace id → what its trace says about a failed run (`attribution.runs.trace_attribution`),
    #: filled where the traces are streamed and dropped (`insights.corpus`) instead of kept
    #: (there with the rows' variable-size fields on disk: `attribution.spilled`).
    attributed: dict[str, dict[str, Any] | None] | SpilledAttributions = field(
        default_factory=dict
    )

    def quarantined_frame(self) -> pd.DataFrame:
        columns = list(QuarantinedRow.model_fields)
        return pd.DataFrame([q.model_dump() for q in self.quarantined], columns=columns)


def sniff(path: Path) -> str:
    """The format of a file, or of a folder's first trace file, from its content alone."""
    files = files_of(path)
    return detect(files[0]) if files else "unknown"


def _load_unknown(files: Sequence[Path]) -> TraceLoadResult:
    result = new_result(files, "unknown")
    for path in files:
        broken = why_unknown(path)
        if broken is not None:
            result.reject(path, broken[0], None, broken[1])
            continue
        result.reject(
            path,
            None,
            None,
            f"format not recognised from content (expected {EXPECTED} or an Inspect AI eval log)",
        )
    return result


def loader_for(kind: str) -> Callable[[Sequence[Path]], TraceLoadResult]:
    """The loader of a detected kind (`loaders.registry`); `unknown` quarantines each file."""
    return _load_unknown if kind == "unknown" else get_loader(kind)


def as_source_list(sources: str | Path | Sequence[str | Path]) -> list[str]:
    """One path given as a plain string (as `papermill -p sources PATH` passes it) is one
    source, never a sequence of one-character paths (`/` would walk the whole filesystem)."""
    if isinstance(sources, (str, Path)):
        return [str(sources)]
    return [str(s) for s in sources]


def load_sources(sources: str | Path | Sequence[str | Path], loader: str | None = None) -> Loaded:
    """Load each source; a folder's files are each read by the loader their content calls for,
    or all by `loader` when one is named (a `loaders.registry` reference: a kind, an installed
    plug-in's name or `package.module:function`). A single string or Path is one source."""
    if loader is not None:
        get_loader(loader)  # an unknown name or a bad path: one error, before any reading
    loaded = Loaded()
    for source in as_source_list(sources):
        if source.startswith("synthetic-runs"):
            # Who&When-shaped runs of the same desk, through the real loader (the generator
            # lives beside the reference harness, not in the core)
            from contextos_lab.harness.reference.synthetic_runs import support_desk_runs
            from contextos_lab.loaders.who_and_when import load_runs

            parts = source.split(":")
            runs, times = support_desk_runs(
                int(parts[1]) if len(parts) > 1 else 45, int(parts[2]) if len(parts) > 2 else 7
            )
            result = load_runs(runs, source, times)
            loaded.records.extend(list(result.records))
            loaded.feedback += list(result.feedback)
            loaded.traces += result.traces
            loaded.quarantined += result.quarantined
            loaded.sources.append({"source": source, "kind": "synthetic", "records": len(runs)})
            continue
        if source.startswith("synthetic"):
            load_synthetic(source, loaded)
            continue
        groups = {loader: files_of(Path(source))} if loader else group_by_kind([Path(source)])
        for kind, files in groups.items():
            result = loader_for(kind)(files)
            loaded.records.extend(list(result.records))
            loaded.feedback += list(result.feedback)
            loaded.traces += result.traces
            loaded.quarantined += result.quarantined
            loaded.sources.append(
                {
                    "source": source,
                    "kind": kind,
                    "files": len(files),
                    "records": len(result.records),
                    "quarantined": len(result.quarantined),
                }
            )
    return loaded


def load_synthetic(source: str, loaded: Loaded) -> None:
    """`synthetic[:N[:SEED]]`: the bundled generator's records and feedback, added to `loaded`."""
    parts = source.split(":")
    n = int(parts[1]) if len(parts) > 1 else 600
    seed = int(parts[2]) if len(parts) > 2 else 7
    # the example domain's generator lives beside the reference harness, not in the core
    from contextos_lab.harness.reference.synthetic_feedback import support_desk

    records, feedback = support_desk(n, seed)
    loaded.records.extend(records)
    loaded.feedback += feedback
    loaded.sources.append({"source": source, "kind": "synthetic", "records": n})
