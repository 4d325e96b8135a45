"""Traces as OpenTelemetry spans: the `Trace`/`Span` shape every trace loader produces, and a
reader for OTLP/JSON exports that follow the GenAI semantic conventions.

A trace is a list of spans because that is what observability backends already store; the
tau-bench and Who&When loaders translate their trajectories into the same spans
(`gen_ai.operation.name` = `chat` / `execute_tool` / `invoke_agent`) so the insight rules read one
shape. OTLP/JSON details handled here: attributes as `[{key, value: {stringValue|intValue|...}}]`,
`scopeSpans` (and the pre-1.0 name `instrumentationLibrarySpans`), nanosecond times as strings
or ints, status codes as ints or `STATUS_CODE_*` names, one request per file or one per line
(the collector's file exporter). Anything unreadable is quarantined with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import RECORD_ERRORS, guarded, loads, loads_list, read_text
from contextos_lab.loaders.quarantine import LoadResult, QuarantinedRow, clip
from contextos_lab.loaders.raw_rows import rows_held
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id

#: GenAI semantic-convention attribute names this kit reads.
OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION = "gen_ai.conversation.id"
#: Kit attributes a harness may set on the root span to name its decision explicitly.
DECISION_KEY = "contextos.decision_key"
DECISION = "contextos.decision"
REASON_CLASS = "contextos.reason_class"
#: OpenTelemetry's attribute naming the class of error of a failed operation.
ERROR_TYPE = "error.type"


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    name: str
    start: datetime
    end: datetime | None = None
    parent_span_id: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    status: str = "UNSET"  # OK | ERROR | UNSET

    @property
    def operation(self) -> str | None:
        value = self.attributes.get(OPERATION)
        return str(value) if value is not None else None

    @property
    def tool_name(self) -> str | None:
        value = self.attributes.get(TOOL_NAME)
        return str(value) if value is not None else None


@dataclass(frozen=True)
class Trace:
    """One run: its spans in start order plus source metadata (file, task id, reward...)."""

    trace_id: str
    source: str
    spans: tuple[Span, ...]
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def started_at(self) -> datetime:
        return min(s.start for s in self.spans) if self.spans else datetime(1970, 1, 1, tzinfo=UTC)

    @property
    def tool_calls(self) -> tuple[str, ...]:
        return tuple(s.tool_name for s in self.spans if s.tool_name and s.operation != "chat")

    @property
    def root(self) -> Span | None:
        ids = {s.span_id for s in self.spans}
        return next((s for s in self.spans if s.parent_span_id not in ids), None)


@dataclass
class TraceLoadResult(LoadResult[DecisionRecord]):
    """A trace loader's result: DecisionRecords as `records`, plus the traces they came from,
    any feedback the source carries and per-record details (e.g. a derived failure reason).
    `source` is the path given (a file or a folder); each quarantined row names its own file."""

    traces: list[Trace] = field(default_factory=list)
    feedback: EnvelopeList[FeedbackEntry] = field(
        default_factory=lambda: EnvelopeList([], FeedbackEntry)
    )
    details: dict[str, Any] = field(default_factory=dict)

    def reject(
        self, file: Path | str, number: int | None, field_: str | None, message: str, raw: Any = ""
    ) -> None:
        """Quarantine one row (`number` 1-based; None: the whole file) with its reason."""
        text = raw if isinstance(raw, str) else _raw_text(raw)
        self.quarantined.append(
            QuarantinedRow(
                file=str(file),
                locator=self.locator,
                line=max(1, number or 1),
                field=field_,
                message=message,
                stage="parse" if field_ is None else "validate",
                raw=clip(text),
                rows=rows_held(Path(file)) if number is None else 1,
            )
        )


def _raw_text(raw: Any) -> str:
    try:
        return json.dumps(raw, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(raw)


def new_result(source: str | Path | Iterable[str | Path], fmt: str, locator: str = "row"):
    items = [source] if isinstance(source, (str, Path)) else list(source)
    return TraceLoadResult(
        Path(items[0]) if len(items) == 1 else Path("."),
        fmt,
        locator,  # type: ignore[arg-type]
        EnvelopeList([], DecisionRecord),
    )


# -- OTLP/JSON reading ---------------------------------------------------------------------------


def _any_value(value: Any) -> Any:
    """Decode an OTLP AnyValue (`{"stringValue": ...}` etc.) to a Python value."""
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values") or [])
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):  # some exporters write a plain object
        return dict(items)
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, Mapping) and "key" in item:
            out[str(item["key"])] = _any_value(item.get("value"))
    return out


def _nanos(value: Any) -> datetime:
    nanos = int(value)
    return datetime.fromtimestamp(nanos / 1e9, tz=UTC)


_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def _status(raw: Any) -> str:
    code = (raw or {}).get("code", 0) if isinstance(raw, Mapping) else raw
    if isinstance(code, str):
        return code.removeprefix("STATUS_CODE_").upper() or "UNSET"
    return _STATUS.get(int(code or 0), "UNSET")


def _requests(path: Path) -> Iterator[tuple[int | None, Any]]:
    """(line, decoded request) for a whole-file JSON or a JSON-lines file."""
    text = read_text(path)
    try:
        yield None, loads_list(text)  # a list with one element too deep: the rest still load
        return
    except ValueError:
        pass
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, loads(line)
            except ValueError as exc:
                yield number, exc


def _spans_of(request: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource attributes, raw span) for every span in an ExportTraceServiceRequest."""
    for rs in request.get("resourceSpans") or request.get("resource_spans") or []:
        resource = _attributes(((rs or {}).get("resource") or {}).get("attributes"))
        scopes = (rs or {}).get("scopeSpans") or (rs or {}).get("instrumentationLibrarySpans")
        for scope in scopes or []:
            for raw in (scope or {}).get("spans") or []:
                yield resource, raw


def load_otlp(paths: str | Path | Iterable[str | Path]) -> TraceLoadResult:
    """Read OTLP/JSON files (or folders of `*.json`/`*.jsonl`) into `Trace`s, one per traceId,
    and one DecisionRecord per trace (`decision_records_from_traces`)."""
    result = new_result(paths, "otlp-json", "line")
    spans: dict[str, list[Span]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for path in _files(paths, ("*.json", "*.jsonl")):
        try:
            requests = list(_requests(path))
        except (OSError, UnicodeDecodeError) as exc:
            result.reject(path, None, None, f"unreadable: {exc}")
            continue
        for line, request in requests:
            if isinstance(request, Exception) or not isinstance(request, Mapping):
                why = request if isinstance(request, Exception) else type(request).__name__
                result.reject(path, line, None, f"not an OTLP/JSON request object: {why}")
                continue
            if not (request.get("resourceSpans") or request.get("resource_spans")):
                result.reject(path, line, "resourceSpans", "no resourceSpans", request)
                continue
            try:
                found = list(_spans_of(request))
            except RECORD_ERRORS as exc:
                result.reject(path, line, "resourceSpans", f"unreadable resourceSpans: {exc}")
                continue
            for resource, raw in found:
                span, problem = guarded(_span, raw)
                if span is None:
                    result.reject(path, line, problem[0], problem[1], raw)
                    continue
                spans.setdefault(span.trace_id, []).append(span)
                meta.setdefault(span.trace_id, {"file": str(path), **resource})
    for tid, group in spans.items():
        trace = Trace(
            tid, "otlp", tuple(sorted(group, key=lambda x: (x.start, x.span_id))), meta[tid]
        )
        try:
            records = decision_records_from_traces([trace])
        except RECORD_ERRORS as exc:  # e.g. a root attribute the DecisionRecord refuses
            result.reject(meta[tid]["file"], None, "attributes", f"trace {tid}: {exc}")
            continue
        result.traces.append(trace)
        result.records.extend(records)
    return result


def _span(raw: Any) -> tuple[Span | None, tuple[str | None, str]]:
    if not isinstance(raw, Mapping):
        return None, (None, "span is not an object")
    trace_id = raw.get("traceId") or raw.get("trace_id")
    span_id = raw.get("spanId") or raw.get("span_id")
    if not trace_id:
        return None, ("traceId", "span has no traceId")
    if not span_id:
        return None, ("spanId", "span has no spanId")
    start_raw = raw.get("startTimeUnixNano", raw.get("start_time_unix_nano"))
    try:
        start = _nanos(start_raw)
    except (TypeError, ValueError):
        return None, ("startTimeUnixNano", f"unreadable start time {start_raw!r}")
    end_raw = raw.get("endTimeUnixNano", raw.get("end_time_unix_nano"))
    try:
        end = _nanos(end_raw) if end_raw not in (None, "", 0, "0") else None
    except (TypeError, ValueError):
        end = None
    return (
        Span(
            trace_id=str(trace_id),
            span_id=str(span_id),
            name=str(raw.get("name") or ""),
            start=start,
            end=end,
            parent_span_id=raw.get("parentSpanId") or raw.get("parent_span_id") or None,
            attributes=_attributes(raw.get("attributes")),
            status=_status(raw.get("status")),
        ),
        (None, ""),
    )


def _files(paths: str | Path | Iterable[str | Path], patterns: Sequence[str]) -> list[Path]:
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            out.extend(sorted({f for pat in patterns for f in p.glob(pat)}))
        else:
            out.append(p)
    return out


#: Per-span usage the conventions reader sets (`conventions.normalise`), summed over a run.
USAGE = (
    ("gen_ai.usage.input_tokens", "input_tokens"),
    ("gen_ai.usage.output_tokens", "output_tokens"),
    ("contextos.cost", "cost"),
)


def _usage(trace: Trace, ended: datetime) -> dict[str, Any]:
    """Tokens, cost and latency of a run, only where its spans carry them."""
    out: dict[str, Any] = {}
    for key, name in USAGE:
        values = [
            v
            for s in trace.spans
            if isinstance(v := s.attributes.get(key), (int, float)) and not isinstance(v, bool)
        ]
        if values:
            out[name] = sum(values)
    if any(s.end is not None for s in trace.spans):
        out["latency_ms"] = round((ended - trace.started_at).total_seconds() * 1000, 3)
    return out


def decision_records_from_traces(traces: Iterable[Trace]) -> list[DecisionRecord]:
    """One DecisionRecord per trace, read off the root span.

    decision_key: `contextos.decision_key` if set, else `<agent>.<last tool>` (the last tool is
    the one whose effect the run ends on). Status: FAILED when any span has status ERROR,
    ESCALATED when a tool named like `transfer*`/`escalat*` ran, else COMPLETED.
    """
    records = []
    for trace in traces:
        root = trace.root
        attrs = dict(root.attributes) if root else {}
        tools = trace.tool_calls
        agent = next(
            (str(s.attributes[AGENT_NAME]) for s in trace.spans if AGENT_NAME in s.attributes),
            "agent",
        )
        key = str(attrs.get(DECISION_KEY) or f"{agent}.{tools[-1] if tools else 'respond'}")
        errored = any(s.status == "ERROR" for s in trace.spans)
        escalated = any(t.startswith(("transfer", "escalat")) for t in tools)
        status = (
            TerminalStatus.failed
            if errored
            else TerminalStatus.escalated
            if escalated
            else TerminalStatus.completed
        )
        inputs: dict[str, Any] = {"source": trace.source, "failed": errored}
        if REASON_CLASS in attrs:
            inputs["reason_class"] = str(attrs[REASON_CLASS])
        elif errored:  # GenAI semconv: a failed span names its error in `error.type`
            kinds = [s.attributes.get(ERROR_TYPE) for s in trace.spans if s.status == "ERROR"]
            inputs["reason_class"] = next((str(k) for k in kinds if k), "span_error")
        ended = max((s.end or s.start for s in trace.spans), default=trace.started_at)
        inputs.update(_usage(trace, ended))
        records.append(
            DecisionRecord(
                record_id=new_id("dr", at=ended, seed=f"otlp:{trace.trace_id}"),
                trace_id=trace.trace_id,
                decision_key=key,
                intent=str(attrs.get(CONVERSATION) or agent),
                status=status,
                decision=str(attrs.get(DECISION) or status.value.lower()),
                inputs=inputs,
                tool_calls=tools,
                decided_at=ended,
            )
        )
    return records
