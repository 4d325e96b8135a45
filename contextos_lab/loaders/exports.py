"""Trace exports read row by row: each row by the reader of its own kind, so one file may mix
tools (and a Who&When or tau-bench run among them), and a row that fits none is quarantined
alone, naming its file, row and why, while the rest of the file loads.

Containers: a JSON list (or an API page `{"data": [...]}`), JSON lines, JSON objects written
one after another (the console span exporter), Parquet and CSV (Phoenix's spans dataframe:
nested cells are JSON or Python literals, read with `ast.literal_eval`, never `eval`).
Spans are grouped into runs by `span_runs`; a run's spans may come from several rows and files.
"""

from __future__ import annotations

import ast
import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from contextos_lab.loaders import langfuse, langsmith, mlflow_traces
from contextos_lab.loaders.conventions import flatten, normalise
from contextos_lab.loaders.detect import csv_header, is_parquet, json_values, kind_of_row, unwrap
from contextos_lab.loaders.guard import RECORD_ERRORS, guarded, loads, read_text
from contextos_lab.loaders.otel_spans import read_span
from contextos_lab.loaders.otlp import Span, TraceLoadResult, _span, _spans_of, new_result
from contextos_lab.loaders.span_fields import refusing
from contextos_lab.loaders.span_runs import add_runs
from contextos_lab.loaders.tau_bench import _run as tau_run
from contextos_lab.loaders.who_and_when import _failure, set_aside
from contextos_lab.schemas.clock import NO_CLOCK

#: Each span-export kind's reader: one row → its spans.
READERS: dict[str, Callable[[Mapping[str, Any]], list[Span]]] = {
    "otel-sdk": lambda row: [read_span(row)],
    "phoenix": lambda row: [read_span(row)],
    "mlflow": mlflow_traces.spans_of,
    "langfuse": langfuse.spans_of,
    "langsmith": langsmith.spans_of,
}
EXPECTED = (
    "OTel SDK span JSON, Phoenix spans, Langfuse traces/observations, LangSmith runs, "
    "MLflow traces, OTLP/JSON requests, tau-bench runs or Who&When runs"
)


def _plain(value: Any) -> Any:
    """Parquet/CSV cells as JSON-like values (arrays → lists, NaN → None, text → literal)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return _plain(loads(value))
        except ValueError:
            try:
                return _plain(ast.literal_eval(value))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return value
    return value


def _is_csv(text: str) -> bool:
    """Text that is no JSON value at all but has a CSV header (Phoenix's `to_csv`)."""
    if csv_header(text) is None:
        return False
    first = next(json_values(text), (0, ValueError()))[1]
    return isinstance(first, Exception)


def rows_of(path: Path) -> Iterator[tuple[int | None, Any]]:
    """(row number, value or the ValueError it raised) for every row of a file."""
    parquet = is_parquet(path)
    text = "" if parquet else read_text(path)
    if parquet or _is_csv(text):
        import pandas as pd

        frame = (
            pd.read_parquet(path)
            if parquet
            else pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        )
        for number, row in enumerate(frame.to_dict("records"), start=1):
            yield number, {str(k): _plain(v) for k, v in row.items() if v not in ("", None)}
        return
    try:
        value = loads(text)
    except ValueError:
        yield from json_values(text)
        return
    value = unwrap(value)
    yield from enumerate(value, start=1) if isinstance(value, list) else [(None, value)]


def load_exports(paths: Sequence[Path] | Iterable[str | Path]) -> TraceLoadResult:
    """Every row of every file read by its kind; spans grouped into one run per trace."""
    files = [Path(p) for p in paths]
    result = new_result(files, "exports")
    spans: dict[str, list[Span]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for path in files:
        try:
            rows = list(rows_of(path))
        except (OSError, UnicodeDecodeError, ValueError, ImportError) as exc:
            result.reject(path, None, None, f"unreadable: {exc}")
            continue
        for number, raw in rows:
            if isinstance(raw, Exception):
                result.reject(path, number, None, f"not JSON: {raw}")
                continue
            kind = kind_of_row(raw)
            if kind in ("who-and-when", "tau-bench"):
                _whole_run(result, path, number, kind, raw)
                continue
            if kind == "otlp":
                found: list[Span] | None = _otlp(result, path, number, raw)
            else:
                found, problem = _read(kind, raw)
            if found is None:
                result.reject(path, number, problem[0], problem[1], raw)
                continue
            for span in found:
                spans.setdefault(span.trace_id, []).append(span)
                resource = {  # an OTLP trace keeps its resource (service.name ...) as before
                    k.removeprefix("resource."): v
                    for k, v in span.attributes.items()
                    if k.startswith("resource.")
                }
                meta.setdefault(span.trace_id, {**resource, "file": str(path), "source": kind})
    add_runs(result, spans, meta, "exports")
    return result


def _read(kind: str, raw: Any) -> tuple[list[Span] | None, tuple[str | None, str]]:
    reader = READERS.get(kind)
    if reader is None:
        keys = ", ".join(sorted(map(str, raw))[:8]) if isinstance(raw, Mapping) else ""
        what = f"an object with keys {keys}" if keys else f"a {type(raw).__name__}"
        return None, (None, f"row fits no known trace shape ({what}); expected {EXPECTED}")
    return guarded(refusing(reader), raw)


def _otlp(
    result: TraceLoadResult, path: Path, number: int | None, request: Mapping[str, Any]
) -> list[Span]:
    """An OTLP/JSON request's spans, each refused on its own, their conventions read."""
    try:
        found = list(_spans_of(request))
    except RECORD_ERRORS as exc:
        result.reject(path, number, "resourceSpans", f"unreadable resourceSpans: {exc}")
        return []
    out = []
    for resource, raw in found:
        span, problem = guarded(_span, raw)
        if span is None:
            result.reject(path, number, problem[0], problem[1], raw)
            continue
        message = (raw.get("status") or {}).get("message") if span.status == "ERROR" else None
        attrs = normalise(
            {**flatten({"resource": resource}), **span.attributes},
            name=span.name,
            error=str(message or "status ERROR") if span.status == "ERROR" else None,
        )
        out.append(replace(span, attributes=attrs))
    return out


def _whole_run(
    result: TraceLoadResult, path: Path, number: int | None, kind: str, raw: Any
) -> None:
    """A Who&When or tau-bench run in a file of spans: read by its own loader's row reader."""
    index = (number or 1) - 1
    if kind == "who-and-when":
        clean, aside = set_aside(raw)
        made, problem = guarded(lambda r, at: _failure(path, number, r, at, aside), clean, NO_CLOCK)
    else:
        made, problem = guarded(lambda r, at: tau_run(path, index, r, None, at), raw, NO_CLOCK)
    if made is None:
        result.reject(path, number, problem[0], problem[1], raw)
        return
    if kind == "who-and-when":
        result.traces.append(made.trace)
        result.records.append(made.record)
        if made.feedback is not None:
            result.feedback.append(made.feedback)
        return
    trace, record, reason = made
    result.traces.append(trace)
    result.records.append(record)
    if reason is not None:
        result.details[record.record_id] = reason


__all__ = ["EXPECTED", "READERS", "load_exports", "rows_of"]
