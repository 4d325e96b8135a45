"""Who&When annotated failures (ag2ai, "Which Agent Causes Task Failures and When?") → feedback.

Public format: one JSON object per failed multi-agent run — `question`, `ground_truth` (the
Hand-Crafted subset spells it `groundtruth`), `history` (turns `{content, role, name?}`; the
Algorithm-Generated subset names the speaker in `name`, Hand-Crafted in `role`),
`mistake_agent`, `mistake_step` (a string index into `history`), `mistake_reason` (the
annotator's explanation), and optionally `question_ID`, `level`, `is_correct`/`is_corrected`,
`system_prompt`. Files may be single objects, lists, JSON lines or the dataset's parquet.

Each run becomes a trace (one span per turn), a FAILED DecisionRecord and a FeedbackEntry whose
`override_reason_text` is the annotator's reason and whose evidence names the mistaken agent
and step. decision_key is `<subset>.<mistaken agent>` so typed clusters answer "which agent";
the free text is what the text clusters read. The data has no clock: runs are placed on a
synthetic timeline in file order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import guarded
from contextos_lab.loaders.otlp import (
    AGENT_NAME,
    OPERATION,
    Span,
    Trace,
    TraceLoadResult,
    _files,
    _requests,
    new_result,
)
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry, OverrideKind
from contextos_lab.schemas.ids import new_id

DEFAULT_EPOCH = datetime(2025, 1, 6, tzinfo=UTC)
ANNOTATOR = "who_and_when_annotator"
REASON_CLASS = "agent_mistake"


@dataclass(frozen=True)
class AnnotatedFailure:
    trace: Trace
    record: DecisionRecord
    feedback: FeedbackEntry


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "unknown"


def _speaker(turn: Mapping[str, Any]) -> str:
    name = turn.get("name") or turn.get("role") or "unknown"
    return re.sub(r"\s*\(.*\)$", "", str(name)).strip() or "unknown"


def _subset(path: Path, raw: Mapping[str, Any]) -> str:
    text = str(path).lower()
    if "hand" in text:
        return "hand_crafted"
    if "algorithm" in text:
        return "algorithm_generated"
    return "hand_crafted" if "system_prompt" not in raw else "algorithm_generated"


def _rows(path: Path) -> Iterator[tuple[int | None, Any]]:
    if path.suffix == ".parquet":
        import pandas as pd

        yield from enumerate(pd.read_parquet(path).to_dict("records"), start=1)
        return
    for number, data in _requests(path):  # a whole-file JSON value, else JSON lines
        if number is None and isinstance(data, list):
            yield from enumerate(data, start=1)
        else:
            yield number, data


def load_who_and_when(
    paths: str | Path | Iterable[str | Path],
    *,
    epoch: datetime = DEFAULT_EPOCH,
    spacing: timedelta = timedelta(hours=6),
) -> TraceLoadResult:
    """Load annotated failures from files or folders (searched recursively): traces, FAILED
    DecisionRecords and one FeedbackEntry each (`feedback`)."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for item in items:
        p = Path(item)
        files.extend(
            sorted(f for ext in ("json", "jsonl", "parquet") for f in p.rglob(f"*.{ext}"))
            if p.is_dir()
            else _files(p, ())
        )
    result = new_result(paths, "who-and-when")
    position = 0
    for path in files:
        try:
            rows = list(_rows(path))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            result.reject(path, None, None, f"unreadable: {exc}")
            continue
        for number, raw in rows:
            item, problem = guarded(_failure_of(path, number), raw, epoch + position * spacing)
            position += 1
            if item is None:
                result.reject(path, number, problem[0], problem[1], raw)
                continue
            result.traces.append(item.trace)
            result.records.append(item.record)
            result.feedback.append(item.feedback)
    return result


def _failure_of(path: Path, line: int | None):
    return lambda raw, at: _failure(path, line, raw, at)


def _failure(
    path: Path, line: int | None, raw: Any, at: datetime
) -> tuple[AnnotatedFailure | None, tuple[str | None, str]]:
    if isinstance(raw, Exception) or not isinstance(raw, Mapping):
        return None, (None, f"not a JSON object: {raw}")
    reason = raw.get("mistake_reason")
    if not isinstance(reason, str) or not reason.strip():
        return None, ("mistake_reason", "no annotated mistake_reason")
    agent = raw.get("mistake_agent")
    if not isinstance(agent, str) or not agent.strip():
        return None, ("mistake_agent", "no annotated mistake_agent")
    try:
        step = int(str(raw.get("mistake_step")).strip())
    except ValueError:
        return None, (
            "mistake_step",
            f"mistake_step is not an integer: {raw.get('mistake_step')!r}",
        )
    history = raw.get("history")
    if hasattr(history, "tolist"):  # parquet gives numpy arrays
        history = history.tolist()
    if not isinstance(history, list):
        return None, ("history", "history missing or not a list")
    subset = _subset(path, raw)
    qid = raw.get("question_ID") or raw.get("question_id") or f"{path.stem}:{line or 0}"
    trace_id = f"ww:{subset}:{qid}"
    spans = [
        Span(
            trace_id,
            "root",
            "invoke_workflow",
            at,
            None,
            None,
            {OPERATION: "invoke_agent", "question": str(raw.get("question") or "")},
        )
    ]
    for i, turn in enumerate(history):
        if not isinstance(turn, Mapping):
            continue
        spans.append(
            Span(
                trace_id,
                f"step{i}",
                f"invoke_agent {_speaker(turn)}",
                at + timedelta(seconds=i),
                None,
                "root",
                {OPERATION: "invoke_agent", AGENT_NAME: _speaker(turn), "whoandwhen.step": i},
            )
        )
    ground_truth = raw.get("ground_truth", raw.get("groundtruth"))
    attrs = {
        "file": str(path),
        "subset": subset,
        "question_id": qid,
        "level": raw.get("level"),
        "ground_truth": None if ground_truth is None else str(ground_truth),
    }
    trace = Trace(trace_id, "who-and-when", tuple(spans), attrs)
    decision_key = f"{subset}.{_slug(agent)}"
    record = DecisionRecord(
        record_id=new_id("dr", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_key=decision_key,
        intent=subset,
        status=TerminalStatus.failed,
        decision="answer",
        inputs={
            "source": "who-and-when",
            "failed": True,
            "reason_class": REASON_CLASS,
            "mistake_agent": agent,
            "mistake_step": step,
            "level": raw.get("level"),
        },
        tool_calls=tuple(_speaker(t) for t in history if isinstance(t, Mapping)),
        decided_at=at,
    )
    feedback = FeedbackEntry(
        id=new_id("fb", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_record_id=record.record_id,
        decision_key=decision_key,
        override_kind=OverrideKind.modify,
        override_reason_class=REASON_CLASS,
        override_reason_text=reason.strip(),
        evidence_refs_seen=(f"agent:{agent}", f"step:{step}", f"trace:{trace_id}"),
        signed_by=ANNOTATOR,
        signed_at=at,
    )
    return AnnotatedFailure(trace, record, feedback), (None, "")
