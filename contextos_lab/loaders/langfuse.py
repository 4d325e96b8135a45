"""Langfuse traces and observations (the public API's JSON, one trace or a list) → `Span`s.

A trace (`GET /api/public/traces/{id}`) has `id`, `timestamp`, `name`, `input`, `output`,
`sessionId`, `userId`, `metadata`, `tags`, `latency` (seconds) and its `observations`.
An observation has `id`, `traceId`, `type` (GENERATION, SPAN, EVENT; newer versions add AGENT,
TOOL, CHAIN, RETRIEVER, ...), `name`, `startTime`/`endTime`, `parentObservationId`, `input`,
`output`, `level` (DEBUG, DEFAULT, WARNING, ERROR), `statusMessage`, `usage`/`usageDetails`
and `calculatedTotalCost`. The v2 API writes the same fields in snake_case; both are read.
The trace itself becomes the run's root step (its input and output), the observations without
a parent hang under it; observations exported on their own form their run by `traceId`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from contextos_lab.loaders.conventions import ORCHESTRATION, flatten, normalise
from contextos_lab.loaders.otlp import Span
from contextos_lab.loaders.span_fields import Refused, maybe_when, parent_id, span_id, when

_OWN = {
    "id",
    "traceId",
    "trace_id",
    "type",
    "name",
    "startTime",
    "start_time",
    "endTime",
    "end_time",
    "parentObservationId",
    "parent_observation_id",
    "input",
    "output",
    "level",
    "statusMessage",
    "status_message",
    "observations",
    "timestamp",
}
_TOKENS = (
    ("input", "gen_ai.usage.input_tokens"),
    ("output", "gen_ai.usage.output_tokens"),
    ("promptTokens", "gen_ai.usage.input_tokens"),
    ("completionTokens", "gen_ai.usage.output_tokens"),
)


def _get(row: Mapping[str, Any], camel: str, snake: str) -> Any:
    return row.get(camel, row.get(snake))


def _usage(row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source in ("usageDetails", "usage_details", "usage"):
        usage = row.get(source)
        if not isinstance(usage, Mapping):
            continue
        for field, key in _TOKENS:
            if usage.get(field) is not None:
                out.setdefault(key, usage[field])
    cost = row.get("calculatedTotalCost", row.get("calculated_total_cost", row.get("total_cost")))
    if cost is None and isinstance(_get(row, "costDetails", "cost_details"), Mapping):
        cost = _get(row, "costDetails", "cost_details").get("total")
    if cost is not None:
        out["contextos.cost"] = cost
    return out


def observation(
    row: Mapping[str, Any], trace_id: str | None = None, root: str | None = None
) -> Span:
    """One observation as a span (its parent the trace's root step when it has none)."""
    own = span_id(row.get("id"), "id")
    tid = trace_id or span_id(_get(row, "traceId", "trace_id"), "traceId")
    level = str(row.get("level") or "DEFAULT").upper()
    message = _get(row, "statusMessage", "status_message")
    failed = level == "ERROR"
    attrs = flatten({k: v for k, v in row.items() if k not in _OWN})
    attrs.update({"langfuse.type": row.get("type"), "langfuse.level": level})
    if message and not failed:
        attrs["langfuse.status_message"] = message
    attrs.update(_usage(row))
    name = str(row.get("name") or "")
    return Span(
        trace_id=tid,
        span_id=own,
        name=name,
        start=when(_get(row, "startTime", "start_time"), "startTime"),
        end=maybe_when(_get(row, "endTime", "end_time"), "endTime"),
        parent_span_id=parent_id(_get(row, "parentObservationId", "parent_observation_id")) or root,
        attributes=normalise(
            attrs,
            name=name,
            kind=row.get("type"),
            inputs=row.get("input"),
            outputs=row.get("output"),
            error=str(message or "level ERROR") if failed else None,
        ),
        status="ERROR" if failed else "UNSET" if level == "WARNING" else "OK",
    )


def spans_of(row: Mapping[str, Any]) -> list[Span]:
    """A trace with its observations, or a single observation."""
    if "observations" not in row:
        return [observation(row)]
    tid = span_id(row.get("id"), "id")
    root = f"trace:{tid}"
    attrs = flatten({k: v for k, v in row.items() if k not in _OWN})
    name = str(row.get("name") or "trace")
    start = when(row.get("timestamp"), "timestamp")
    latency = row.get("latency")  # seconds, as the API reports a trace's latency
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) or latency < 0:
        latency = None
    spans = [
        Span(
            trace_id=tid,
            span_id=root,
            name=name,
            start=start,
            end=start + timedelta(seconds=latency) if latency is not None else None,
            attributes=normalise(
                attrs,
                name=name,
                kind=ORCHESTRATION.upper(),
                inputs=row.get("input"),
                outputs=row.get("output"),
            ),
        )
    ]
    observations = row.get("observations") or []
    if not isinstance(observations, list):
        raise Refused("observations", "observations is not a list")
    for i, obs in enumerate(observations):
        if isinstance(obs, str):  # the list endpoint gives ids only: nothing more to read
            continue
        if not isinstance(obs, Mapping):
            raise Refused(f"observations.{i}", "observation is not an object")
        try:
            spans.append(observation(obs, tid, root))
        except Refused as exc:
            raise Refused(f"observations.{i}.{exc.field}", exc.message) from None
    return spans


__all__ = ["observation", "spans_of"]
