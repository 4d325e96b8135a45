"""Attribute every failed run that has a trace: one row per run, annotations beside it.

The row holds what the attributor found (agent, step, signal, excerpt), what the step does
(`act`), the run's error family, loop/stall/limit flags and ending, where the data has
ground truth the tau-bench action diff's shape, and the calibrated probability with the top-k
candidate steps (`low_confidence` below the attributor's threshold). Annotated agent/step
columns (`annotated_*`) are the answer key: copied for scoring and display, never read by
attribution or clustering.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def act_of(run: RunTrace, a: Attribution) -> str:
    """What the decisive step does, in words a reviewer reads in a cluster title."""
    turn = run.turns[a.position]
    row = step_features(run)[a.position]
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
    return " and ".join(parts) or None


def attribute_runs(
    traces: Iterable[Trace],
    records: pd.DataFrame,
    attributor: Attributor | None = None,
) -> pd.DataFrame:
    """One row per failed record of `records` (a runs frame) whose trace is loaded."""
    model = attributor or get_attributor()
    by_trace = {t.trace_id: t for t in traces}
    rows = []
    failed = records[records["failed"].astype(bool)] if "failed" in records else records
    for rec in failed.itertuples(index=False):
        trace = by_trace.get(rec.trace_id)
        if trace is None:
            continue
        run = run_trace(trace)
        a = model.attribute(run)
        if a is None:
            continue
        s = run_signals(run)
        family, kind = _error(s, a.position)
        inputs = rec.inputs if isinstance(rec.inputs, Mapping) else {}
        rows.append(
            {
                "record_id": rec.record_id,
                "trace_id": rec.trace_id,
                "agent": a.agent,
                "agent_key": agent_key(a.agent),
                "role": a.role,
                "step": a.step,
                "n_steps": (run.turns[-1].index + 1) if run.turns else 0,
                "signal": a.signal,
                "signals": [name for name, _ in a.signals],
                "excerpt": a.excerpt,
                "act": act_of(run, a),
                "error": family,
                "error_type": kind,
                "loop": bool(s.loop_steps),
                "stall": bool(s.stall_steps),
                "limit": s.limit,
                "ending": s.ending,
                "error_steps": a.evidence.get("error_steps", []),
                "loop_steps": a.evidence.get("loop_steps", []),
                "stall_steps": a.evidence.get("stall_steps", []),
                "diff": diff_shape(inputs),
                "annotated_agent": inputs.get("mistake_agent"),
                "annotated_step": inputs.get("mistake_step"),
                "probability": a.probability,
                "low_confidence": a.low_confidence,
                "candidates": [
                    {"step": c.step, "agent": c.agent, "probability": c.probability}
                    for c in a.candidates
                ],
                "attributor": a.attributor,
            }
        )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(object).where(frame.notna(), None)  # JSON has no NaN


__all__ = ["COLUMNS", "act_of", "attribute_runs", "diff_shape"]
