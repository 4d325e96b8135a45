"""Who&When annotated failures (ag2ai, "Which Agent Causes Task Failures and When?") → feedback.

Public format: one JSON object per failed multi-agent run — `question`, `ground_truth` (the
Hand-Crafted subset spells it `groundtruth`), `history` (turns `{content, role, name?}`; the
Algorithm-Generated subset names the speaker in `name`, Hand-Crafted in `role`),
`mistake_agent`, `mistake_step` (a string index into `history`), `mistake_reason` (the
annotator's explanation), and optionally `question_ID`, `level`, `is_correct`/`is_corrected`,
`system_prompt`. Files may be single objects, lists, JSON lines or the dataset's parquet.

Each run becomes a trace (one span per turn), a FAILED DecisionRecord and, when the run is
annotated, a FeedbackEntry on that record whose `override_reason_text` is the annotator's reason
(one observation with two sources: the analysis counts the run once). A run without annotations
(no `mistake_agent`/`mistake_step`/`mistake_reason`: what a researcher usually has) is loaded
the same way, without feedback and with the annotation columns empty; it is FAILED unless it
says `is_correct: true`. Annotations are the answer key: the analysis reads the trace.

The key comes from the task (`<subset>.level_<level>`), never
from the mistake; the annotation (`mistake_agent`, `mistake_step`, the run phase of that step,
and `mistake_type`, `is_corrected`, `labels` where present) travels in `inputs`. An annotation
whose step is spoken by another agent than `mistake_agent`, or whose step is outside the
history, is flagged in `inputs.annotation_flag`, not trusted silently. A partial annotation
(a field missing, null or malformed) never rejects the run: the usable fields are kept and the
others are listed in `inputs.annotation_missing` (field → `missing` / `null` / `malformed: …`);
a correction (FeedbackEntry) is written only when the reason text is there.

The subset is read from content (Algorithm-Generated turns carry `name` and the file a
`system_prompt`; Hand-Crafted turns name the speaker in `role`), never from the path. The data
has no clock: every run is stamped `NO_CLOCK`, so no trend is fitted.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import guarded
from contextos_lab.loaders.hazards import find_hazard
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
from contextos_lab.loaders.trace_text import CONTENT, CONTENT_CHARS
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry, OverrideKind
from contextos_lab.schemas.ids import new_id

#: Annotation fields beyond agent/step/reason that some subsets carry; kept verbatim.
EXTRA_ANNOTATIONS = ("mistake_type", "is_corrected", "is_correct", "labels")
#: The annotation proper: a run carrying none of them is an unannotated trace, not an error.
ANNOTATION_KEYS = ("mistake_agent", "mistake_step", "mistake_reason")
PHASES = ("first_third", "middle_third", "last_third")
ANNOTATOR = "who_and_when_annotator"
#: What an agent name's comparison drops: anything but a letter or digit of any script.
_NOT_NAME = re.compile(r"[\W_]+")
REASON_CLASS = "agent_mistake"


@dataclass(frozen=True)
class AnnotatedFailure:
    trace: Trace
    record: DecisionRecord
    #: The annotator's reason as a correction; None for an unannotated run.
    feedback: FeedbackEntry | None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "unknown"


def _speaker(turn: Mapping[str, Any]) -> str:
    name = turn.get("name") or turn.get("role") or "unknown"
    return re.sub(r"\s*\(.*\)$", "", str(name)).strip() or "unknown"


def _subset(raw: Mapping[str, Any], history: list[Any]) -> str:
    named = any(isinstance(t, Mapping) and t.get("name") for t in history)
    return "algorithm_generated" if named or "system_prompt" in raw else "hand_crafted"


def phase_of(step: int, n_steps: int) -> str | None:
    """Which third of the run the step falls in (None when the step is outside the run)."""
    if n_steps <= 0 or not 0 <= step < n_steps:
        return None
    return PHASES[min(2, 3 * step // n_steps)]


def _same_agent(a: str, b: str) -> bool:
    """`_slug` equality with letters of any script kept (`計画者` is not `検索者`; `_slug`
    made both `unknown`); ASCII names compare as before."""
    return _NOT_NAME.sub("_", a.lower()).strip("_") == _NOT_NAME.sub("_", b.lower()).strip("_")


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


def load_who_and_when(paths: str | Path | Iterable[str | Path]) -> TraceLoadResult:
    """Load annotated failures from files or folders (searched recursively): traces, FAILED
    DecisionRecords and one FeedbackEntry each (`feedback`)."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for given in items:
        p = Path(given)
        files.extend(
            sorted(f for ext in ("json", "jsonl", "parquet") for f in p.rglob(f"*.{ext}"))
            if p.is_dir()
            else _files(p, ())
        )
    result = new_result(paths, "who-and-when")
    for path in files:
        try:
            rows = list(_rows(path))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            result.reject(path, None, None, f"unreadable: {exc}")
            continue
        for number, raw in rows:
            _add_row(result, path, number, raw, NO_CLOCK)
    return result


def _add_row(
    result: TraceLoadResult, path: Path, number: int | None, raw: Any, at: datetime
) -> None:
    """Read one run into `result` (or reject it there): the one row step shared by the files
    and the in-memory runs, so both are read exactly alike."""
    item, problem = guarded(_failure_of(path, number), *set_aside(raw), at)
    if item is None:
        result.reject(path, number, problem[0], problem[1], raw)
        return
    result.traces.append(item.trace)
    result.records.append(item.record)
    if item.feedback is not None:
        result.feedback.append(item.feedback)


def _annotation(
    raw: Mapping[str, Any],
) -> tuple[str | None, str | None, int | None, dict[str, str]]:
    """(reason, agent, step, missing): the usable part of an annotation, and for each field
    that is not usable whether it is missing, null or malformed (with the value)."""
    missing: dict[str, str] = {}

    def absent(key: str) -> bool:
        if key not in raw:
            missing[key] = "missing"
        elif raw[key] is None or (isinstance(raw[key], str) and not raw[key].strip()):
            missing[key] = "null"
        else:
            return False
        return True

    reason = agent = None
    step: int | None = None
    for key in ("mistake_reason", "mistake_agent"):
        if not absent(key):
            if isinstance(raw[key], str):
                value = raw[key].strip()
                reason, agent = (value, agent) if key == "mistake_reason" else (reason, value)
            else:
                missing[key] = f"malformed: {raw[key]!r}"[:120]
    if not absent("mistake_step"):
        value = raw["mistake_step"]
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            step = int(str(int(value) if isinstance(value, float) else value).strip())
        except (TypeError, ValueError, OverflowError):
            missing["mistake_step"] = f"malformed: {value!r}"[:120]
    return reason, agent, step, missing


def set_aside(raw: Any) -> tuple[Any, dict[str, str]]:
    """(the row without annotation fields that cannot be stored as read, why each was set
    aside): an unstorable annotation (a 30-digit step) is a malformed label, reported per
    field like any other, never a reason to refuse the run."""
    if not isinstance(raw, Mapping):
        return raw, {}
    aside = {}
    for key in (*ANNOTATION_KEYS, *EXTRA_ANNOTATIONS):
        hazard = find_hazard({key: raw[key]}) if key in raw else None
        if hazard is not None:
            aside[key] = f"malformed: {hazard[0]} {hazard[1]}"[:120]
    return {k: v for k, v in raw.items() if k not in aside}, aside


def load_runs(
    runs: Sequence[Mapping[str, Any]], origin: str, times: Sequence[datetime]
) -> TraceLoadResult:
    """Who&When-shaped runs made in memory (a generator's), each at its time: read exactly as
    the files are, so the notebook's default data goes through the real loader."""
    result = new_result(origin, "who-and-when")
    path = Path(origin)
    for number, (raw, at) in enumerate(zip(runs, times, strict=True), start=1):
        _add_row(result, path, number, raw, at)
    return result


def _failure_of(path: Path, line: int | None):
    return lambda raw, aside, at: _failure(path, line, raw, at, aside)


def _spans(
    trace_id: str, at: datetime, raw: Mapping[str, Any], turns: Sequence[Mapping[str, Any]]
) -> list[Span]:
    """The workflow's root span, then one agent span per turn, a second apart."""
    root = Span(
        trace_id, "root", "invoke_workflow", at, None, None,
        {OPERATION: "invoke_agent", "question": str(raw.get("question") or "")},
    )  # fmt: skip
    return [
        root,
        *(
            Span(
                trace_id,
                f"step{i}",
                f"invoke_agent {_speaker(turn)}",
                at + timedelta(seconds=i),
                None,
                "root",
                {
                    OPERATION: "invoke_agent",
                    AGENT_NAME: _speaker(turn),
                    "whoandwhen.step": i,
                    CONTENT: str(turn.get("content") or "")[:CONTENT_CHARS],
                },
            )
            for i, turn in enumerate(turns)
        ),
    ]


def _annotation_flag(
    step: int | None, agent: str | None, speaker: str | None, n_turns: int
) -> str | None:
    """Where the annotation contradicts the run: a step outside it, or spoken by another."""
    if step is None or agent is None:
        return None
    if speaker is None:
        return f"mistake_step {step} is outside the history ({n_turns} steps)"
    if not _same_agent(speaker, agent):
        return f"step {step} is spoken by {speaker}, not by mistake_agent {agent}"
    return None


def _annotator_correction(
    record: DecisionRecord,
    reason_class: str,
    reason: str,
    agent: str | None,
    step: int | None,
    phase: str | None,
) -> FeedbackEntry:
    """The annotation as the annotator's correction of the run (the answer key's source)."""
    trace_id, at = record.trace_id, record.decided_at
    seen = [f"agent:{agent}"] if agent is not None else []
    seen += [f"step:{step}"] if step is not None else []
    return FeedbackEntry(
        id=new_id("fb", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_record_id=record.record_id,
        decision_key=record.decision_key,
        override_kind=OverrideKind.modify,
        override_reason_class=reason_class,
        override_reason_text=reason,
        evidence_refs_seen=(
            *seen,
            f"phase:{phase or ('outside_run' if step is not None else 'unknown')}",
            f"trace:{trace_id}",
        ),
        signed_by=ANNOTATOR,
        signed_at=at,
    )


def _history(raw: Mapping[str, Any]) -> list[Any] | None:
    """The run's turns as a list (Parquet gives numpy arrays), else None."""
    history = raw.get("history")
    if history is not None and hasattr(history, "tolist"):
        history = history.tolist()
    return history if isinstance(history, list) else None


def _failure(
    path: Path, line: int | None, raw: Any, at: datetime, aside: Mapping[str, str] | None = None
) -> tuple[AnnotatedFailure | None, tuple[str | None, str]]:
    if isinstance(raw, Exception) or not isinstance(raw, Mapping):
        return None, (None, f"not a JSON object: {raw}")
    aside = aside or {}
    annotated = any(raw.get(k) not in (None, "") for k in ANNOTATION_KEYS) or any(
        k in aside for k in ANNOTATION_KEYS
    )
    # An annotation is the answer key, never a reason to refuse the run: each field that is
    # missing, null or malformed is reported in `annotation_missing` and the rest is kept.
    reason, agent, step, missing = _annotation(raw) if annotated else (None, None, None, {})
    missing = {**missing, **aside}
    history = _history(raw)
    if history is None:
        return None, ("history", "history missing or not a list")
    subset = _subset(raw, history)
    digest = hashlib.sha256(canonical_json(history).encode("utf-8")).hexdigest()[:10]
    qid = raw.get("question_ID") or raw.get("question_id") or digest
    trace_id = f"ww:{subset}:{qid}"
    turns = [t if isinstance(t, Mapping) else {} for t in history]
    speaker = _speaker(turns[step]) if step is not None and 0 <= step < len(turns) else None
    flag = _annotation_flag(step, agent, speaker, len(turns))
    phase = phase_of(step, len(turns)) if step is not None else None
    failed = raw.get("is_correct") is not True
    level = raw.get("level")
    ground_truth = raw.get("ground_truth", raw.get("groundtruth"))
    attrs = {"file": path.name, "line": line, "subset": subset, "question_id": qid,
             "level": level,
             "ground_truth": None if ground_truth is None else str(ground_truth)}  # fmt: skip
    trace = Trace(trace_id, "who-and-when", tuple(_spans(trace_id, at, raw, turns)), attrs)
    decision_key = f"{subset}.level_{_slug(str(level))}" if level not in (None, "") else subset
    # The run's reason class is not taken from its annotation (annotated and unannotated runs
    # are analysed alike); the annotator's correction carries REASON_CLASS, the free
    # `mistake_type` stays an annotation column.
    reason_class = REASON_CLASS
    inputs = {
        "source": "who-and-when", "failed": failed, "annotated": annotated,
        "reason_class": None, "mistake_agent": agent, "mistake_step": step,
        "mistake_reason": reason.strip() if reason else None, "n_steps": len(turns),
        "phase": phase, "speaker_at_step": speaker, "annotation_flag": flag,
        "annotation_missing": missing, "failing_step": step, "level": level,
        "annotation": {k: raw[k] for k in EXTRA_ANNOTATIONS if k in raw},
    }  # fmt: skip
    record = DecisionRecord(
        record_id=new_id("dr", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_key=decision_key,
        intent=subset,
        status=TerminalStatus.failed if failed else TerminalStatus.completed,
        decision="answer",
        inputs=inputs,
        tool_calls=tuple(_speaker(t) for t in turns),
        decided_at=at,
    )
    if not annotated or reason is None:
        return AnnotatedFailure(trace, record, None), (None, "")
    feedback = _annotator_correction(record, reason_class, reason.strip(), agent, step, phase)
    return AnnotatedFailure(trace, record, feedback), (None, "")
