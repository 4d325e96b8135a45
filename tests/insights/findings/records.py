"""Small decision records for the findings tests: a source, a key, a task, a path, an outcome."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from contextos_lab.schemas import DecisionRecord, TerminalStatus

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def run(
    i: int,
    key: str,
    failed: bool,
    *,
    source: str | None = None,
    task: int | None = None,
    tools: tuple[str, ...] = ("a",),
    **inputs: Any,
) -> DecisionRecord:
    extra: dict[str, Any] = dict(inputs)
    if source is not None:
        extra["source"] = source
    if task is not None:
        extra["task_id"] = task
    if failed:
        extra.setdefault("reason_class", "wrong_tool")
    return DecisionRecord(
        record_id=f"dr_{i:06d}",
        trace_id=f"t{i}",
        decision_key=key,
        status=TerminalStatus.failed if failed else TerminalStatus.completed,
        decision="x",
        inputs=extra,
        tool_calls=tools,
        decided_at=T0 + timedelta(hours=i),
    )
