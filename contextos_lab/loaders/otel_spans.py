"""OpenTelemetry spans as the Python SDK and Phoenix write them (not OTLP/JSON) → `Span`s.

`span.to_json()` / `ConsoleSpanExporter` write `name`, `context.trace_id`/`span_id` (`0x` hex),
`parent_id`, ISO `start_time`/`end_time`, `status.status_code`/`description`, `attributes` (flat
OpenInference or GenAI keys), `events` (an `exception` event carries `exception.type` and
`exception.message`) and `resource.attributes`. Phoenix's spans dataframe is the same span with
the nesting spelled in column names (`context.span_id`, `attributes.llm.input_messages`),
`span_kind` and a top-level `status_code`/`status_message`; its REST span JSON nests `context`
again. All three are read by one function: the row is flattened first, so nesting is moot.
MLflow's spans differ only in nanosecond times and JSON-encoded attribute values
(`mlflow_traces` passes `nanos` and decodes them first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextos_lab.loaders.conventions import flatten, normalise, text_of
from contextos_lab.loaders.otlp import Span
from contextos_lab.loaders.span_fields import (
    Refused,
    maybe_when,
    parent_id,
    span_id,
    status,
    when,
)

_OWN = (
    "name",
    "parent_id",
    "parent_span_id",
    "start_time",
    "end_time",
    "status_code",
    "status_message",
    "span_kind",
    "status",
    "events",
    "kind",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "trace_id",
    "span_id",
)


def _pick(flat: Mapping[str, Any], *keys: str) -> Any:
    return next((flat[k] for k in keys if flat.get(k) not in (None, "")), None)


def _exception(events: Any) -> tuple[str | None, str | None]:
    """(type, message) of the first `exception` event, if any."""
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, Mapping) or event.get("name") != "exception":
            continue
        attrs = flatten(event.get("attributes") or {})
        kind, message = attrs.get("exception.type"), attrs.get("exception.message")
        return (str(kind) if kind else None), (text_of(message) if message else None)
    return None, None


def read_span(row: Mapping[str, Any], *, nanos: bool = False, kind: Any = None) -> Span:
    """One span row (SDK JSON, Phoenix dataframe row or REST span) as a normalised `Span`."""
    flat = flatten({k: v for k, v in row.items() if k not in ("attributes", "events")})
    trace_id = span_id(_pick(flat, "context.trace_id", "trace_id", "traceId"), "context.trace_id")
    own_id = span_id(_pick(flat, "context.span_id", "span_id", "spanId"), "context.span_id")
    start = when(_pick(flat, "start_time", "start_time_unix_nano"), "start_time", nanos=nanos)
    end = maybe_when(_pick(flat, "end_time", "end_time_unix_nano"), "end_time", nanos=nanos)
    raw_status = row.get("status")
    code = _pick(flat, "status_code", "status.status_code", "status.code")
    message = _pick(flat, "status_message", "status.description", "status.message")
    if isinstance(raw_status, str):
        code = code or raw_status
    attrs = row.get("attributes")
    if attrs is not None and not isinstance(attrs, Mapping):
        raise Refused("attributes", f"attributes is not an object: {type(attrs).__name__}")
    attributes = flatten(attrs or {})
    attributes.update(
        {k.removeprefix("attributes."): v for k, v in flat.items() if k.startswith("attributes.")}
    )
    for key, value in flat.items():  # fields this reader does not know stay on the span
        if not key.startswith(("attributes.", "context.")) and key not in _OWN:
            attributes.setdefault(f"span.{key}", value)
    error_type, error_message = _exception(row.get("events"))
    state = status(code)
    error = (message or error_message or "status ERROR") if state == "ERROR" else None
    if error is not None and error_type and error_message and error_message not in error:
        error = f"{error}; {error_type}: {error_message}"
    name = str(row.get("name") or "")
    return Span(
        trace_id=trace_id,
        span_id=own_id,
        name=name,
        start=start,
        end=end,
        parent_span_id=parent_id(_pick(flat, "parent_id", "parent_span_id", "parentSpanId")),
        attributes=normalise(
            attributes,
            name=name,
            kind=kind or row.get("span_kind"),
            error=error,
            error_type=error_type,
        ),
        status=state,
    )


__all__ = ["read_span"]
