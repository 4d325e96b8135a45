"""Inspect AI eval logs (`.eval` archives or `.json`) → traces and DecisionRecords.

Read with the `inspect-ai` package's own reader (`inspect_ai.log.read_eval_log`), so every log
version that Inspect can read is read the same way here; the package is an optional extra
(`pip install 'contextos-lab[inspect]'`). Without it each log file is quarantined with the
install hint, never a crash.

One record per sample (and epoch): it failed when the sample errored, hit a limit, or any of its
scores converts (Inspect's `value_to_float`) to less than 1. decision_key is the eval's task
name (the task, not the outcome); reason_class is `sample_error`, `limit_<type>` or
`scored_incorrect`. Time is the eval's own `created` stamp (a real clock), else `NO_CLOCK`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import guarded
from contextos_lab.loaders.otlp import (
    OPERATION,
    TOOL_NAME,
    Span,
    Trace,
    TraceLoadResult,
    _files,
    new_result,
)
from contextos_lab.loaders.trace_text import CONTENT, CONTENT_CHARS
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.ids import new_id

INSTALL_HINT = "Inspect AI logs need the optional extra: pip install 'contextos-lab[inspect]'"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "unknown"


def _when(created: Any) -> datetime:
    try:
        at = datetime.fromisoformat(str(created))
    except (TypeError, ValueError):
        return NO_CLOCK
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [getattr(c, "text", None) or getattr(c, "reasoning", None) for c in content or []]
    return "\n".join(p for p in parts if p)


def load_inspect(paths: str | Path | Iterable[str | Path]) -> TraceLoadResult:
    """Load Inspect AI eval logs: one trace and one DecisionRecord per sample and epoch."""
    result = new_result(paths, "inspect")
    files = _files(paths, ("*.eval", "*.json"))
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        for path in files:
            result.reject(path, None, None, INSTALL_HINT)
        return result
    for path in files:
        try:
            log = read_eval_log(str(path))
        except Exception as exc:
            result.reject(path, None, None, f"not a readable Inspect eval log: {exc}")
            continue
        task = str(getattr(log.eval, "task", "") or "inspect_task")
        at = _when(getattr(log.eval, "created", None))
        run = str(getattr(log.eval, "eval_id", "") or getattr(log.eval, "run_id", "") or task)
        for index, sample in enumerate(log.samples or [], start=1):
            made, problem = guarded(partial(_sample, path, task, run), sample, at)
            if made is None:
                result.reject(path, index, problem[0], problem[1], repr(sample)[:2000])
                continue
            trace, record = made
            result.traces.append(trace)
            result.records.append(record)
    return result


def _failure(sample: Any) -> str | None:
    from inspect_ai.scorer import value_to_float

    if getattr(sample, "error", None) is not None:
        return "sample_error"
    limit = getattr(sample, "limit", None)
    if limit is not None:
        return f"limit_{_slug(str(getattr(limit, 'type', 'unknown')))}"
    to_float = value_to_float()
    scores: Mapping[str, Any] = sample.scores or {}
    if any(to_float(score.value) < 1.0 for score in scores.values()):
        return "scored_incorrect"
    return None


def _sample(
    path: Path, task: str, run: str, sample: Any, at: datetime
) -> tuple[tuple[Trace, DecisionRecord] | None, tuple[str | None, str]]:
    if not sample.scores and getattr(sample, "error", None) is None:
        return None, ("scores", "sample has no score and no error: pass or fail is unknown")
    trace_id = f"inspect:{run}:{sample.id}:{sample.epoch}"
    spans = [
        Span(trace_id, "root", f"invoke_agent {task}", at, None, None, {OPERATION: "invoke_agent"})
    ]
    tools: list[str] = []
    for i, message in enumerate(sample.messages or []):
        stamp = at + timedelta(microseconds=i)
        role = str(getattr(message, "role", "unknown"))
        for j, call in enumerate(getattr(message, "tool_calls", None) or []):
            tools.append(str(call.function))
            attrs = {OPERATION: "execute_tool", TOOL_NAME: str(call.function), "step": i}
            attrs[CONTENT] = str(call.arguments)[:CONTENT_CHARS]
            spans.append(
                Span(
                    trace_id,
                    f"s{i}_{j}",
                    f"execute_tool {call.function}",
                    stamp,
                    None,
                    "root",
                    attrs,
                )
            )
        attrs = {OPERATION: "chat", "gen_ai.message.role": role, "step": i}
        attrs[CONTENT] = _text(message.content)[:CONTENT_CHARS]
        spans.append(Span(trace_id, f"s{i}", f"chat {role}", stamp, None, "root", attrs))
    reason = _failure(sample)
    scores = {name: score.value for name, score in (sample.scores or {}).items()}
    inputs: dict[str, Any] = {
        "source": "inspect",
        "file": path.name,
        "task": task,
        "sample_id": sample.id,
        "epoch": sample.epoch,
        "failed": reason is not None,
        "scores": scores,
        "target": sample.target if isinstance(sample.target, str) else list(sample.target),
    }
    if reason is not None:
        # where the sample ended, for exemplars: not `failing_step`, which is an answer key
        # (annotated or derived from ground truth) that `attribution score` would score against
        inputs.update(reason_class=reason, end_step=max(0, len(sample.messages or []) - 1))
    record = DecisionRecord(
        record_id=new_id("dr", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_key=_slug(task),
        intent=task,
        status=TerminalStatus.failed if reason else TerminalStatus.completed,
        decision="answer",
        inputs=inputs,
        tool_calls=tuple(tools),
        decided_at=at,
    )
    attrs = {"file": path.name, "task": task, "sample_id": sample.id, "epoch": sample.epoch}
    return (Trace(trace_id, "inspect", tuple(spans), attrs), record), (None, "")
