"""Which trace format a file holds, read from its content, never from its path.

A folder can be renamed or moved (`tau-bench/` → `restaurant/`, `Hand-Crafted/` → `handoff/`)
without changing what is detected, so keys, ids and splits stay the same. Each file is judged by
its first JSON value (the first element of a list, the first line of JSON lines, the first row
of a parquet file's columns):

- `tau-bench`: a run with `traj`/`trajectory` and a `reward` (or `info.reward_info`);
- `who-and-when`: a multi-agent run's `history` of turns (`content` + `name`/`role`), with or
  without the annotation (`mistake_agent`/`mistake_step`/`mistake_reason`);
- `otlp`: an OTLP/JSON request (`resourceSpans`);
- `inspect`: an Inspect AI eval log (a `.eval` zip archive, or JSON with `eval` and `version`);
- `otel-sdk`: OpenTelemetry SDK spans (`span.to_json()`: `context.trace_id`, `parent_id`,
  `status.status_code`), as a JSON list, JSON lines or the console exporter's JSON objects;
- `phoenix`: Phoenix spans (`span_kind`, `context.span_id` columns of its spans dataframe as
  Parquet or CSV, or its REST span JSON);
- `langfuse`: Langfuse traces (`observations`) or observations (`type` + `traceId`);
- `langsmith`: LangSmith runs (`run_type` with `id`/`trace_id`/`inputs`);
- `mlflow`: an MLflow trace (`info` + `data.spans`) or MLflow spans (`mlflow.spanType`);
- `mixed`: rows of two or more of these kinds in one file (each row is read by its own kind);
- `unknown`: anything else (each file, or each row of a mixed file, is quarantined with why).

JSON lists and JSON lines are judged row by row (up to `SCAN_ROWS` rows): a file whose rows
are all of one kind (unrecognised rows aside, which its loader quarantines) is of that kind.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import read_text

KINDS = (
    "tau-bench",
    "who-and-when",
    "otlp",
    "inspect",
    "otel-sdk",
    "phoenix",
    "langfuse",
    "langsmith",
    "mlflow",
    "mixed",
    "unknown",
)
#: Kinds read row by row by `exports.load_exports` (so a file may mix them).
SPAN_EXPORTS = ("otel-sdk", "phoenix", "langfuse", "langsmith", "mlflow", "mixed")
#: File suffixes a folder is searched for (recursively, in sorted order).
SUFFIXES = (".json", ".jsonl", ".parquet", ".eval", ".csv")
#: Keys under which an export's API page holds its rows (Langfuse `data`, ...).
WRAPPERS = ("data", "runs", "traces", "observations", "spans")
#: Rows of a JSON list or JSON-lines file judged one by one before the first decides.
SCAN_ROWS = 10_000
_OBSERVATION_TYPES = {
    "GENERATION",
    "SPAN",
    "EVENT",
    "AGENT",
    "TOOL",
    "CHAIN",
    "RETRIEVER",
    "EMBEDDING",
    "EVALUATOR",
    "GUARDRAIL",
}
_WW_KEYS = {"mistake_agent", "mistake_step", "mistake_reason"}


def _turns(history: Any) -> bool:
    """A list of turns: objects with `content` and a speaker (`name` or `role`)."""
    return (
        isinstance(history, list)
        and bool(history)
        and all(
            isinstance(t, Mapping) and "content" in t and ("name" in t or "role" in t)
            for t in history[:3]
        )
    )


def _span_export(row: Mapping[str, Any], keys: set[str]) -> str | None:
    """The tool a span-like row comes from, by the fields only that tool writes."""
    attrs = got if isinstance(got := row.get("attributes"), Mapping) else {}
    data = row.get("data")
    if (isinstance(data, Mapping) and isinstance(data.get("spans"), list)) or (
        "span_type" in keys or "mlflow.spanType" in attrs or "mlflow.traceRequestId" in attrs
    ):
        return "mlflow"
    if "run_type" in keys and keys & {"id", "trace_id", "inputs", "parent_run_id"}:
        return "langsmith"
    if isinstance(row.get("observations"), list) and keys & {"timestamp", "sessionId", "id"}:
        return "langfuse"
    if str(row.get("type") or "").upper() in _OBSERVATION_TYPES and keys & {
        "traceId",
        "trace_id",
        "parentObservationId",
        "parent_observation_id",
    }:
        return "langfuse"
    context = row.get("context")
    if "span_kind" in keys or "context.span_id" in keys:
        return "phoenix"
    if isinstance(context, Mapping) and "span_id" in context and "name" in keys:
        return "otel-sdk"
    return None


def kind_of_row(first: Any) -> str:
    """The kind of one JSON value (a run, a span, a request...)."""
    if not isinstance(first, Mapping):
        return "unknown"
    keys = set(first)
    if keys & {"traj", "trajectory"} and ("reward" in keys or "info" in keys):
        return "tau-bench"
    if "history" in keys and (keys & _WW_KEYS or _turns(first["history"]) or "question" in keys):
        return "who-and-when"
    if "resourceSpans" in keys or "resource_spans" in keys:
        return "otlp"
    if "eval" in keys and "version" in keys:
        return "inspect"
    return _span_export(first, keys) or "unknown"


def unwrap(value: Any) -> Any:
    """The list of rows inside an API page (`{"data": [...]}`, `{"runs": [...]}`, ...) when
    the object is not itself a row of a known kind; else the value as it is."""
    if not isinstance(value, Mapping) or kind_of_row(value) != "unknown":
        return value
    return next((value[k] for k in WRAPPERS if isinstance(value.get(k), list)), value)


def kind_of_value(value: Any) -> str:
    """A file's kind from its JSON value: each row of a list judged (see the docstring)."""
    value = unwrap(value)
    rows = value[:SCAN_ROWS] if isinstance(value, list) else [value]
    return kind_of_rows(rows)


def kind_of_rows(rows: Iterable[Any]) -> str:
    kinds = {kind_of_row(row) for row in rows} - {"unknown"}
    if not kinds:
        return "unknown"
    return kinds.pop() if len(kinds) == 1 else "mixed"


def json_values(text: str) -> Iterator[tuple[int, Any]]:
    """(line, value) of each JSON value in text holding several: JSON lines, or JSON objects
    written one after another over many lines (the console span exporter's output). A value
    that does not parse is yielded as its ValueError, and reading resumes at the next line."""
    decoder = json.JSONDecoder()
    lines = text.splitlines(keepends=True)
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line)
    number, pos = 0, 0
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        number = bisect_right(starts, pos)
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError as exc:
            yield number, exc
            pos = starts[number] if number < len(starts) else len(text)
            continue
        yield number, value


def _first_value(path: Path) -> Any:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
        return (
            {"eval": {}, "version": 2} if names & {"header.json", "_journal/start.json"} else None
        )
    if is_parquet(path):
        import pyarrow.parquet as pq

        return {name: None for name in pq.read_schema(path).names}
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError:
        values = [v for _, v in islice(json_values(text), SCAN_ROWS)]
        if values and not all(isinstance(v, Exception) for v in values):
            return [v for v in values if not isinstance(v, Exception)]
    header = csv_header(text)
    if header is None:
        raise ValueError("neither JSON, Parquet nor CSV")
    return {name: None for name in header}


def is_parquet(path: Path) -> bool:
    """Parquet by its magic bytes (`PAR1`), whatever the file is called."""
    with path.open("rb") as handle:
        return handle.read(4) == b"PAR1"


def csv_header(text: str) -> list[str] | None:
    """The header of comma-separated text (two or more named columns), else None."""
    if text.lstrip()[:1] in ("[", "{"):
        return None
    header = next(csv.reader(io.StringIO(text)), [])
    return header if len(header) >= 2 and all(h.strip() for h in header) else None


def why_unknown(path: Path) -> tuple[int, str] | None:
    """(line, reason) when a file no format claims is JSON that does not parse (a truncated or
    hand-edited export): said with the parser's own line and column, not as an unknown format."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError):
        return None
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return None  # several values (JSON lines): parseable, just of no known shape
        return exc.lineno, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None
    return None


def detect(path: Path) -> str:
    """The format of one file (see the module docstring); unreadable files are `unknown`."""
    try:
        return kind_of_value(_first_value(path))
    except (OSError, ValueError, UnicodeDecodeError, zipfile.BadZipFile, ImportError):
        return "unknown"


def files_of(source: Path) -> list[Path]:
    """The file itself, or a folder's trace files in sorted order of their path within it
    (`walk_files`, listed)."""
    return list(walk_files(source))


def walk_files(source: Path) -> Iterator[Path]:
    """The file itself, or a folder's trace files in sorted order of their path within it,
    found as they are yielded: a folder's entries sorted one folder at a time (a sub-folder's
    files come where its name sorts, as its path's parts do), never a list of every file of a
    corpus (about 0.4 KB a `Path`: 40 MB for 100,000 files). As `Path.rglob` did before it,
    symbolic links to folders are not entered and a folder that cannot be listed is skipped."""
    if not source.is_dir():
        yield source
        return
    try:
        names = sorted(os.listdir(source))  # names only: a flat folder of a corpus is long
    except PermissionError:
        return
    for name in names:
        path = source / name
        if path.is_dir() and not path.is_symlink():
            yield from walk_files(path)
        elif path.suffix in SUFFIXES and path.is_file():
            yield path


def group_by_kind(sources: Iterable[Path]) -> dict[str, list[Path]]:
    """Each source's files grouped by detected format (a folder may mix formats)."""
    groups: dict[str, list[Path]] = {}
    for source in sources:
        for path in files_of(source):
            groups.setdefault(detect(path), []).append(path)
    return groups


__all__ = [
    "KINDS",
    "SCAN_ROWS",
    "SPAN_EXPORTS",
    "SUFFIXES",
    "WRAPPERS",
    "csv_header",
    "detect",
    "files_of",
    "group_by_kind",
    "is_parquet",
    "json_values",
    "kind_of_row",
    "kind_of_rows",
    "kind_of_value",
    "unwrap",
    "walk_files",
]
