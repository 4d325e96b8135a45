"""LangSmith runs (JSON or JSON lines of `Run`s, as `client.list_runs` gives them) → `Span`s.

A run is LangSmith's span: `id`, `name`, `run_type` (llm, chain, tool, retriever, embedding,
prompt, parser, or any word), ISO `start_time`/`end_time`, `inputs`, `outputs`, `error`,
`parent_run_id`, `trace_id` (the root run's id), `dotted_order` (`<time>Z<id>.<time>Z<id>…`),
token counts (`prompt_tokens`, `completion_tokens`) and `total_cost`; `child_runs` may nest the
children. A run without `trace_id` is placed by its `dotted_order`'s first id, else (a root) by
its own id. Every other field (`extra.metadata`, `tags`, `session_id`, ...) stays as attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextos_lab.loaders.conventions import flatten, normalise
from contextos_lab.loaders.otlp import Span
from contextos_lab.loaders.span_fields import Refused, maybe_when, parent_id, span_id, when

_OWN = (
    "id",
    "name",
    "run_type",
    "start_time",
    "end_time",
    "inputs",
    "outputs",
    "error",
    "parent_run_id",
    "trace_id",
    "child_runs",
    "status",
)
_USAGE = {
    "prompt_tokens": "gen_ai.usage.input_tokens",
    "completion_tokens": "gen_ai.usage.output_tokens",
    "total_cost": "contextos.cost",
}


def _trace_of(run: Mapping[str, Any], own: str) -> str:
    if run.get("trace_id"):
        return span_id(run["trace_id"], "trace_id")
    order = str(run.get("dotted_order") or "")
    if order:
        return span_id(order.split(".")[0].partition("Z")[2] or own, "dotted_order")
    if run.get("parent_run_id"):
        raise Refused("trace_id", "a child run without trace_id or dotted_order cannot be placed")
    return own


def spans_of(run: Mapping[str, Any], trace_id: str | None = None) -> list[Span]:
    """The run and its `child_runs` (recursively) as spans of one trace."""
    own = span_id(run.get("id"), "id")
    tid = trace_id or _trace_of(run, own)
    error = run.get("error")
    failed = bool(error) or str(run.get("status") or "").lower() == "error"
    attrs = flatten({k: v for k, v in run.items() if k not in _OWN})
    for field, key in _USAGE.items():
        if run.get(field) is not None:
            attrs[key] = run[field]
    name = str(run.get("name") or "")
    span = Span(
        trace_id=tid,
        span_id=own,
        name=name,
        start=when(run.get("start_time"), "start_time"),
        end=maybe_when(run.get("end_time"), "end_time"),
        parent_span_id=parent_id(run.get("parent_run_id")),
        attributes=normalise(
            {**attrs, "langsmith.run_type": run.get("run_type")},
            name=name,
            kind=run.get("run_type"),
            inputs=run.get("inputs"),
            outputs=run.get("outputs"),
            error=str(error or "run status error") if failed else None,
            error_type=_error_type(error),
        ),
        status="ERROR" if failed else "OK" if run.get("end_time") else "UNSET",
    )
    children = run.get("child_runs") or []
    if not isinstance(children, list):
        raise Refused("child_runs", "child_runs is not a list")
    out = [span]
    for child in children:
        if not isinstance(child, Mapping):
            raise Refused("child_runs", "a child run is not an object")
        out += spans_of({**child, "parent_run_id": child.get("parent_run_id") or own}, tid)
    return out


def _error_type(error: Any) -> str | None:
    """`ValueError('...')` / `ValueError: ...` → `ValueError` (LangSmith stores repr text)."""
    head = str(error or "").split("(")[0].split(":")[0].strip()
    return head if head.isidentifier() else None


__all__ = ["spans_of"]
