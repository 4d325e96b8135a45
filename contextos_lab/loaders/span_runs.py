"""Spans of any export grouped into runs: one trace → one run, its spans in start order → steps.

Every export reader (OTel SDK JSON, Phoenix, Langfuse, LangSmith, MLflow) yields `Span`s whose
attributes went through `conventions.normalise`; this module does what is common to all of them:
it groups spans by trace, orders them by start time (ties by span id, so the order never depends
on the file's row order), numbers them as steps, names who speaks at each step (the span's own
agent, else the nearest agent or chain above it, else its name; tool spans speak as `tool`) and
turns each run into a DecisionRecord. A span whose parent is not in the file is still placed in
its trace by its start time and marked `contextos.orphan`; nothing is dropped for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from contextos_lab.loaders.conventions import ORCHESTRATION, ROLE, TOOL
from contextos_lab.loaders.guard import RECORD_ERRORS
from contextos_lab.loaders.otlp import (
    AGENT_NAME,
    Span,
    Trace,
    TraceLoadResult,
    decision_records_from_traces,
)

#: The kit's step number of a span in its run (read by the attributor's `turns`).
STEP = "contextos.step"
ORPHAN = "contextos.orphan"
SPEAKER_ROLE = "gen_ai.message.role"


def _speaker(span: Span, by_id: Mapping[str, Span], tools_only: bool) -> str | None:
    """Who speaks at this step: an agent name on the span or above it, else the nearest
    orchestration span's name above it; tool steps speak as `tool`."""
    if span.attributes.get(ROLE) == TOOL:
        return None if tools_only else "tool"
    seen: set[str] = set()
    at: Span | None = span
    while at is not None and at.span_id not in seen:
        seen.add(at.span_id)
        if at.attributes.get(AGENT_NAME):
            return str(at.attributes[AGENT_NAME])
        if at is not span and at.attributes.get(ROLE) == ORCHESTRATION and at.name:
            return at.name
        at = by_id.get(at.parent_span_id or "")
    return span.name or None


def order_run(trace_id: str, spans: Iterable[Span]) -> tuple[Span, ...]:
    """The run's spans in start order with their step, speaker and orphan mark set.
    A span id seen twice keeps its first span (an exporter that retried wrote it twice)."""
    unique: dict[str, Span] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.span_id)):
        unique.setdefault(span.span_id, span)
    by_id = unique
    tools_only = all(s.attributes.get(ROLE) == TOOL for s in by_id.values())
    out = []
    for step, span in enumerate(by_id.values()):
        attrs: dict[str, Any] = dict(span.attributes)
        attrs[STEP] = step
        if span.parent_span_id and span.parent_span_id not in by_id:
            attrs[ORPHAN] = True
        speaker = _speaker(span, by_id, tools_only)
        if speaker is not None and AGENT_NAME not in attrs:
            key = SPEAKER_ROLE if speaker == "tool" else AGENT_NAME
            attrs[key] = speaker
        out.append(replace(span, trace_id=trace_id, attributes=attrs))
    return tuple(out)


def add_runs(
    result: TraceLoadResult,
    spans: Mapping[str, list[Span]],
    meta: Mapping[str, dict[str, Any]],
    source: str,
) -> None:
    """One Trace and one DecisionRecord per trace id into `result`; a trace whose record
    cannot be made is quarantined naming its file and trace id."""
    for tid, group in spans.items():
        info = meta.get(tid, {})
        trace = Trace(tid, str(info.get("source", source)), order_run(tid, group), info)
        try:
            records = decision_records_from_traces([trace])
        except RECORD_ERRORS as exc:
            result.reject(info.get("file", "."), None, "attributes", f"trace {tid}: {exc}")
            continue
        result.traces.append(trace)
        result.records.extend(records)


__all__ = ["ORPHAN", "SPEAKER_ROLE", "STEP", "add_runs", "order_run"]
