"""Attribute every failed run that has a trace: one row per run, annotations beside it.

The row holds what the attributor found (agent, step, signal, excerpt), what the step does
(`act`), the run's error family, loop/stall/limit flags and ending, where the data has
ground truth the tau-bench action diff's shape, and the calibrated probability with the top-k
candidate steps (`low_confidence` below the attributor's threshold). Annotated agent/step
columns (`annotated_*`) are the answer key: copied for scoring and display, never read by
attribution or clustering.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.features import RunSignals, run_signals, step_features
from contextos_lab.insights.attribution.protocol import Attribution, Attributor
from contextos_lab.insights.attribution.registry import get_attributor
from contextos_lab.insights.attribution.turns import RunTrace, agent_key, run_trace
from contextos_lab.loaders.otlp import Trace

COLUMNS = (
    "record_id",
    "trace_id",
    "agent",
    "agent_key",
    "role",
    "step",
    "n_steps",
    "signal",
    "signals",
    "excerpt",
    "act",
    "error",
    "error_type",
    "loop",
    "stall",
    "limit",
    "ending",
    "error_steps",
    "loop_steps",
    "stall_steps",
    "diff",
    "annotated_agent",
    "annotated_step",
    "probability",
    "low_confidence",
    "candidates",
    "attributor",
)


def act_of(run: RunTrace, a: Attribution, signals: RunSignals | None = None) -> str:
    """What the decisive step does, in words a reviewer reads in a cluster title
    (`signals`: the run's `run_signals`, when the caller has them)."""
    turn = run.turns[a.position]
    row = step_features(run, signals)[a.position]
    if turn.tool:
        return f"calls {turn.tool}"
    if row["first_turn"] and row["issues_action"]:
        return "hands over the task with code that runs"
    if row["first_turn"]:
        return "states the task and the plan"
    if row["workaround_language"]:
        return "falls back to assumed, sample or manual data"
    if row["action_fails"]:
        return "runs code that fails"
    if row["issues_action"]:
        return "runs code whose result is taken as correct"
    if row["repeats_previous_action"]:
        return "repeats an action it already took"
    if row["last_actor_before_first_flag"]:
        return "takes a step that makes no progress"
    if row["role_orchestrator"]:
        return "directs the next step"
    return "answers without running or calling anything"


def _error(s: RunSignals, position: int) -> tuple[str | None, str | None]:
    """The first execution error at or after the decisive step (else the run's first)."""
    after = [i for i in s.errors if i >= position] or s.errors
    if not after:
        return None, None
    kind = s.error_types.get(after[0])
    return sig.error_family(kind), kind


def diff_shape(inputs: Mapping[str, Any]) -> str | None:
    """The tau-bench action diff's shape where ground truth exists (missing / extra / wrong
    arguments), read from the stored diff itself."""
    diff = inputs.get("action_diff")
    if not isinstance(diff, Mapping):
        return None
    parts = [
        label
        for key, label in (
            ("missing", "misses an expected write"),
            ("extra", "makes an extra write"),
            ("wrong_arguments", "writes with wrong arguments"),
        )
        if diff.get(key)
    ]
    return sys.intern(" and ".join(parts)) if parts else None  # a few shapes: one string each


def trace_attribution(trace: Trace, attributor: Attributor) -> dict[str, Any] | None:
    """The columns of a failed run's row that come from its trace (None: nothing to blame).

    Computed where the trace is read, so a corpus streams through: only this row travels on,
    never the trace (`insights.corpus`)."""
    return trace_attributions([trace], attributor)[trace.trace_id]


def trace_attributions(
    traces: Sequence[Trace], attributor: Attributor
) -> dict[str, dict[str, Any] | None]:
    """Trace id → `trace_attribution` for a batch (one file's failed runs; the last trace of an
    id wins). An attributor with `attribute_many` (the LLM judge) gets the whole batch at once,
    so its calls run concurrently under its own bound, cache and budget."""
    runs = [run_trace(t) for t in traces]
    many = getattr(attributor, "attribute_many", None)
    found = many(runs) if callable(many) else [attributor.attribute(r) for r in runs]
    return {t.trace_id: _row(r, a) for t, r, a in zip(traces, runs, found, strict=True)}


def _row(run: RunTrace, a: Attribution | None) -> dict[str, Any] | None:
    """The trace's columns of a failed run's row, from its attribution."""
    if a is None:
        return None
    s = run_signals(run)
    family, kind = _error(s, a.position)
    return {
        "agent": a.agent,
        "agent_key": agent_key(a.agent),
        "role": a.role,
        "step": a.step,
        "n_steps": (run.turns[-1].index + 1) if run.turns else 0,
        "signal": a.signal,
        "signals": [name for name, _ in a.signals],
        "excerpt": a.excerpt,
        "act": act_of(run, a, s),
        "error": family,
        "error_type": kind,
        "loop": bool(s.loop_steps),
        "stall": bool(s.stall_steps),
        "limit": s.limit,
        "ending": s.ending,
        "error_steps": a.evidence.get("error_steps", []),
        "loop_steps": a.evidence.get("loop_steps", []),
        "stall_steps": a.evidence.get("stall_steps", []),
        "probability": a.probability,
        "low_confidence": a.low_confidence,
        "candidates": [
            {
                "step": c.step,
                "agent": c.agent,
                "probability": c.probability,
                "evidence": [name for name, _ in c.signals],
            }
            for c in a.candidates
        ],
        "attributor": a.attributor,
    }


def failed_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The failed records of a runs frame (every record when it has no `failed` column)."""
    return records[records["failed"].astype(bool)] if "failed" in records else records


def attribution_frame(
    found: Mapping[str, Mapping[str, Any] | None], records: pd.DataFrame
) -> pd.DataFrame:
    """One row per failed record of `records` whose trace has an entry in `found` (trace id →
    `trace_attribution`), the record's own columns (ids, diff, annotations) beside it."""
    columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}  # no list of row dicts
    failed = failed_rows(records)[["record_id", "trace_id", "inputs"]]  # what a row reads
    for rec in failed.itertuples(index=False):
        got = found.get(rec.trace_id)
        if got is None:
            continue
        inputs = rec.inputs if isinstance(rec.inputs, Mapping) else {}
        row = {
            **got,
            "record_id": rec.record_id,
            "trace_id": rec.trace_id,
            "diff": diff_shape(inputs),
            "annotated_agent": inputs.get("mistake_agent"),
            "annotated_step": inputs.get("mistake_step"),
        }
        for name, values in columns.items():
            values.append(row.get(name))
    return _objects(columns)


def _objects(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """The rows as an object frame, missing values None (JSON has no NaN). A text column takes
    the rows' own strings (mostly one object per distinct text: `attribution.spilled`), where
    pandas' `str` columns turned back into objects made a new string per cell."""
    frame = pd.DataFrame(columns, columns=list(COLUMNS))
    texts = [c for c in COLUMNS if isinstance(frame[c].dtype, pd.StringDtype)]
    out = frame.drop(columns=texts)
    out = out.astype(object).where(out.notna(), None)
    for c in texts:
        out[c] = pd.Series(columns[c], index=frame.index, dtype=object)
    return out[list(COLUMNS)]


def attribute_runs(
    traces: Iterable[Trace],
    records: pd.DataFrame,
    attributor: Attributor | None = None,
) -> pd.DataFrame:
    """One row per failed record of `records` (a runs frame) whose trace is loaded."""
    model = attributor or get_attributor()
    by_trace = {t.trace_id: t for t in traces}
    wanted = set(failed_rows(records)["trace_id"]) & set(by_trace)
    return attribution_frame({t: trace_attribution(by_trace[t], model) for t in wanted}, records)


__all__ = [
    "COLUMNS",
    "act_of",
    "attribute_runs",
    "attribution_frame",
    "diff_shape",
    "failed_rows",
    "trace_attribution",
]
