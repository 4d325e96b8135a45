"""MLflow Tracing exports → `Span`s: a trace's `{"info": ..., "data": {"spans": [...]}}` (what
`mlflow traces get` and `Trace.to_json()` write), or its spans on their own.

MLflow 2 spans are OpenTelemetry SDK spans (`context.span_id`, `parent_id`, `status_code`) with
nanosecond integer times; MLflow 3 spans use OTLP's names (`span_id`, `parent_span_id`,
`start_time_unix_nano`, `status.code`). Either way every attribute value is JSON-encoded text:
`mlflow.spanType` ("LLM", "TOOL", "RETRIEVER", "CHAIN", "AGENT", ...), `mlflow.spanInputs`,
`mlflow.spanOutputs`, `mlflow.traceRequestId`. Values are decoded here (a value that is not JSON
stays as written) and the trace id is the trace's own (`request_id`/`trace_id` of `info`,
else `mlflow.traceRequestId`), so the spans of one trace form one run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextos_lab.loaders.conventions import ROLE, flatten, normalise
from contextos_lab.loaders.otel_spans import read_span
from contextos_lab.loaders.otlp import Span
from contextos_lab.loaders.span_fields import Refused

SPAN_TYPE = "mlflow.spanType"
INPUTS, OUTPUTS = "mlflow.spanInputs", "mlflow.spanOutputs"
REQUEST_ID = "mlflow.traceRequestId"


def _decoded(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _trace_id(info: Mapping[str, Any]) -> str | None:
    value = info.get("trace_id") or info.get("request_id")
    return str(value) if value else None


def spans_of(row: Mapping[str, Any]) -> list[Span]:
    """Every span of one MLflow trace (or the one span the row is)."""
    info = got if isinstance(got := row.get("info"), Mapping) else {}
    data = got if isinstance(got := row.get("data"), Mapping) else row
    raw_spans = data.get("spans") if isinstance(data, Mapping) else None
    if raw_spans is None:
        return [_span(row, None)]
    if not isinstance(raw_spans, list):
        raise Refused("data.spans", f"spans is not a list: {type(raw_spans).__name__}")
    tid = _trace_id(info) or _trace_id(row)
    out = []
    for i, raw in enumerate(raw_spans):
        if not isinstance(raw, Mapping):
            raise Refused(f"data.spans.{i}", "span is not an object")
        try:
            out.append(_span(raw, tid))
        except Refused as exc:
            raise Refused(f"data.spans.{i}.{exc.field}", exc.message) from None
    return out


def _span(raw: Mapping[str, Any], trace_id: str | None) -> Span:
    attrs = raw.get("attributes")
    attrs = {str(k): _decoded(v) for k, v in attrs.items()} if isinstance(attrs, Mapping) else {}
    kind = raw.get("span_type") or attrs.get(SPAN_TYPE)
    inputs = raw.get("inputs", attrs.get(INPUTS))
    outputs = raw.get("outputs", attrs.get(OUTPUTS))
    span = read_span({**raw, "attributes": attrs}, nanos=True, kind=kind)
    tid = trace_id or (str(attrs[REQUEST_ID]) if attrs.get(REQUEST_ID) else span.trace_id)
    kept = {k: v for k, v in span.attributes.items() if k not in ("span.inputs", "span.outputs")}
    kept.update(flatten({"mlflow.spanInputs": inputs, "mlflow.spanOutputs": outputs}))
    role_kind = kind or kept.get(ROLE)
    error = kept.get("contextos.content", "") if span.status == "ERROR" else None
    text = normalise(kept, name=span.name, kind=role_kind, inputs=inputs, outputs=outputs)
    if error and error not in text.get("contextos.content", ""):
        text["contextos.content"] = f"{text['contextos.content']}\n{error}".strip()
    return Span(
        tid, span.span_id, span.name, span.start, span.end, span.parent_span_id, text, span.status
    )


__all__ = ["spans_of"]
