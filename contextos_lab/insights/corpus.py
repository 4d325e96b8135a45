"""A corpus of trace files streamed into compact per-run summaries, over a process pool.

`cluster` never holds a corpus' parsed traces: each file is read by the loader its content calls
for, its runs become DecisionRecords (and feedback, and quarantined rows), each failed run of
the search split is attributed from its trace there and then (`trace_attribution`: a small row),
and the trace is dropped. What is kept per run is what the aggregation reads: the record's
columns as bytes in Arrow blocks (`compact_rows`), the attribution row as a line of a
temporary file (`attribution.spilled`); no Python object per run is kept while reading
(docs/scale.md, "No object per run while reading").

Files are read in batches by a `ProcessPoolExecutor` (all cores by default), at most a few
batches in flight, and their summaries come back in file order: the results are those of the
in-memory `load_sources` + `analyse`, run for run. A format whose runs may span files (OTLP
spans grouped by trace id) is still loaded as one group per source, in-process.
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from contextos_lab.insights.attribution.protocol import Attributor
from contextos_lab.insights.attribution.registry import get_attributor
from contextos_lab.insights.attribution.runs import trace_attributions
from contextos_lab.insights.attribution.spilled import SpilledAttributions
from contextos_lab.insights.compact_rows import CompactRows
from contextos_lab.insights.sources import Loaded, as_source_list, load_synthetic, loader_for
from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.loaders.detect import detect, walk_files
from contextos_lab.loaders.otlp import TraceLoadResult
from contextos_lab.loaders.quarantine import QuarantinedRow
from contextos_lab.loaders.registry import get_loader
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry

#: Formats whose files are independent (one file's runs never continue in another), so each
#: file is read on its own; any other format is loaded as one group per source.
PER_FILE = frozenset({"tau-bench", "who-and-when", "inspect", "unknown"})
#: Files per task sent to a worker (amortises the pickling of a task and its result).
BATCH = 16
_FAILED = frozenset({TerminalStatus.failed, TerminalStatus.denied})

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Summary:
    """What the analysis keeps of some files of one format: never their traces."""

    kind: str
    files: int
    #: A list, or (merged per format: `by_kind`) Arrow blocks.
    records: list[DecisionRecord] | CompactRows = field(default_factory=list)
    feedback: list[FeedbackEntry] = field(default_factory=list)
    quarantined: list[QuarantinedRow] = field(default_factory=list)
    #: Trace id → `trace_attribution` of a failed search-split run (None: nothing to blame).
    attributed: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    #: A file of a grouped format, read later with the rest of its group (`files` is 0).
    deferred: str | None = None


def failed(record: DecisionRecord) -> bool:
    """The runs frame's `failed` (`runs.columns.runs_frame`) for one record."""
    flagged = isinstance(record.inputs, dict) and record.inputs.get("failed") is True
    return record.status in _FAILED or flagged


def summarise(
    result: TraceLoadResult, kind: str, files: int, split: SplitSpec, attributor: Attributor
) -> Summary:
    """A loader's result without its traces: the failed search-split runs are attributed."""
    wanted = {r.trace_id for r in result.records if failed(r) and split.of(r.trace_id) == SEARCH}
    attributed = trace_attributions([t for t in result.traces if t.trace_id in wanted], attributor)
    return Summary(
        kind,
        files,
        list(result.records),
        list(result.feedback),
        list(result.quarantined),
        attributed,
    )


@dataclass(frozen=True)
class ReadFiles:
    """The task a worker runs: detect and summarise each file of a batch (picklable).

    `loader` (a `loaders.registry` reference) reads every file instead of the loader its
    content calls for; a reference that is not a per-file kind reads a source's files as one
    group, since its runs may span files. It travels as its name, resolved in the worker."""

    split: SplitSpec
    attributor: Attributor | None = None
    loader: str | None = None

    def __call__(self, batch: Sequence[Path]) -> list[Summary]:
        """One summary per file, its records already cut to the cells the analysis keeps
        (`CompactRows`): the parent unpickles a few strings a run, not a model object with its
        dicts, and does not encode them again (docs/scale.md, "Cells from the workers")."""
        model = self.attributor or get_attributor()
        out = []
        for path in batch:
            kind = self.loader or detect(path)
            if kind not in PER_FILE:  # read with the rest of its group, after the stream
                out.append(Summary(kind, 0, deferred=str(path)))
                continue
            part = summarise(loader_for(kind)([path]), kind, 1, self.split, model)
            part.records = CompactRows(part.records)
            out.append(part)
        return out


def ordered_map(
    fn: Callable[[T], R], tasks: Iterable[T], pool: Executor | None, in_flight: int
) -> Iterator[R]:
    """`map(fn, tasks)` in order, lazily: at most `in_flight` tasks submitted ahead of the one
    being yielded (`Executor.map` would submit every task at once); no pool: in-process."""
    if pool is None:
        yield from map(fn, tasks)
        return
    pending: deque[Future[R]] = deque()
    for task in tasks:
        pending.append(pool.submit(fn, task))
        if len(pending) >= in_flight:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _batches(paths: Iterable[Path], size: int) -> Iterator[list[Path]]:
    batch: list[Path] = []
    for path in paths:
        batch.append(path)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def stream_source(
    source: Path,
    read: ReadFiles,
    pool: Executor | None = None,
    *,
    workers: int = 1,
    batch: int = BATCH,
) -> Iterator[Summary]:
    """One summary per file of `source` in file order (files read lazily, a batch at a time),
    then one per grouped format (its files loaded together, in-process; an empty `deferred`
    summary marks where each of its files was met, so formats keep their first-seen order)."""
    grouped: dict[str, list[Path]] = {}
    batches = _batches(walk_files(source), batch)  # never a list of every file
    for part in ordered_map(read, batches, pool, 2 * workers):
        for summary in part:
            if summary.deferred is not None:
                grouped.setdefault(summary.kind, []).append(Path(summary.deferred))
            yield summary
    model = read.attributor or get_attributor()
    for kind, paths in grouped.items():
        yield summarise(loader_for(kind)(paths), kind, len(paths), read.split, model)


def pool_workers(attributor: Attributor | None, workers: int) -> tuple[int, str | None]:
    """The worker processes `attributor` can be sent to, and a note when none: one that cannot
    be pickled (the llm-judge holds a lock and a cache; plug-ins often hold a client) is used
    in this process, where its own concurrency, cache and budget hold for the whole run. Sent
    to a pool it hung without a word."""
    if workers <= 1 or attributor is None:
        return workers, None
    try:
        pickle.dumps(attributor)
    except Exception as exc:  # pickling raises TypeError, AttributeError, PicklingError, ...
        name = getattr(attributor, "name", type(attributor).__name__)
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return (
            1,
            f"attributor {name!r} cannot go to worker processes ({why}); "
            "files are read in this process",
        )
    return workers, None


def load_corpus(
    sources: str | Path | Sequence[str | Path],
    split: SplitSpec,
    *,
    attributor: Attributor | None = None,
    workers: int | None = None,
    batch: int = BATCH,
    loader: str | None = None,
) -> Loaded:
    """`load_sources` without the traces: records, feedback and quarantined rows in the same
    order, each source's formats in the order first seen, and `attributed` filled instead.
    `loader` names the loader of every file (see `ReadFiles`); None: each file's content
    chooses."""
    if loader is not None:
        get_loader(loader)  # an unknown name or a bad path: one error, before any reading
    n, note = pool_workers(attributor, workers or default_workers())
    if note:
        warnings.warn(note, stacklevel=2)
    read = ReadFiles(split, attributor, loader)
    # Arrow blocks, not one model object per run; attribution rows on disk
    spilled = SpilledAttributions()
    loaded = Loaded(records=CompactRows(), attributed=spilled)
    pool = ProcessPoolExecutor(n) if n > 1 else None
    try:
        for source in as_source_list(sources):
            if source.startswith("synthetic"):
                load_synthetic(source, loaded)
                continue
            parts = stream_source(Path(source), read, pool, workers=n, batch=batch)
            for kind, whole in by_kind(parts, spilled).items():
                add(loaded, source, kind, [whole])
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return loaded


def by_kind(parts: Iterable[Summary], attributed: SpilledAttributions) -> dict[str, Summary]:
    """One source's summaries merged per format (formats in the order first seen), as they
    arrive: each summary is dropped once merged, its records moved into Arrow blocks
    (`CompactRows`) and its attribution rows onto disk (`attribution.spilled`, ranked as
    `add` would have put them), so nothing per run waits for the end of the source."""
    kinds: dict[str, tuple[Summary, CompactRows, int]] = {}
    for part in parts:
        if part.kind not in kinds:
            rows = CompactRows()
            kinds[part.kind] = (Summary(part.kind, 0, records=rows), rows, attributed.group())
        whole, rows, group = kinds[part.kind]
        whole.files += part.files
        rows.extend(part.records)
        whole.feedback += part.feedback
        whole.quarantined += part.quarantined
        for trace_id, row in part.attributed.items():
            attributed.put(trace_id, row, group)
    return {kind: whole for kind, (whole, _, _) in kinds.items()}


def add(loaded: Loaded, source: str, kind: str, parts: Iterable[Summary]) -> None:
    """Append one source's summaries of one format to `loaded`, as `load_sources` would."""
    files = records = quarantined = 0
    for part in parts:
        loaded.records.extend(part.records)
        loaded.feedback += part.feedback
        loaded.quarantined += part.quarantined
        loaded.attributed.update(part.attributed)
        files += part.files
        records += len(part.records)
        quarantined += len(part.quarantined)
    loaded.sources.append(
        {
            "source": source,
            "kind": kind,
            "files": files,
            "records": records,
            "quarantined": quarantined,
        }
    )


__all__ = [
    "BATCH",
    "PER_FILE",
    "ReadFiles",
    "Summary",
    "add",
    "by_kind",
    "default_workers",
    "failed",
    "load_corpus",
    "ordered_map",
    "stream_source",
    "summarise",
]
