"""What a reviewer reads next to a cluster: the raw trace around the failing step, and where in
the run annotated failures happened (mistaken agent × run phase).

Reviewers judge a failure from the turns around it, not from a summary, so an exemplar is the
trace's own text (the `CONTENT` the loaders keep on each span) for a few steps either side of
the step the run failed at (`inputs.failing_step`: the annotated step, or the call that went
wrong), else the step it ended at (`inputs.end_step`: a failed Inspect sample's last message).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from contextos_lab.loaders.otlp import AGENT_NAME, TOOL_NAME, Trace
from contextos_lab.loaders.trace_text import CONTENT
from contextos_lab.schemas.insight import Insight

#: Span attributes that carry a step's position in its run, per loader.
STEP_KEYS = ("whoandwhen.step", "tau.message_index", "step")
PHASE_ORDER = ("first_third", "middle_third", "last_third")


def _step(attributes: Mapping[str, Any]) -> int | None:
    for key in STEP_KEYS:
        if isinstance(attributes.get(key), int):
            return int(attributes[key])
    return None


def trace_excerpt(trace: Trace, step: int, around: int = 2, width: int = 400) -> pd.DataFrame:
    """The trace's own text from `step - around` to `step + around` (one row per span), with
    the failing step marked; text is cut at `width` characters."""
    rows = []
    for span in trace.spans:
        at = _step(span.attributes)
        if at is None or abs(at - step) > around:
            continue
        who = (
            span.attributes.get(AGENT_NAME)
            or span.attributes.get("gen_ai.message.role")
            or (f"tool call {span.attributes.get(TOOL_NAME)}" if span.tool_name else span.name)
        )
        text = str(span.attributes.get(CONTENT) or "")
        rows.append(
            {
                "step": at,
                "failing": "▶" if at == step else "",
                "who": str(who),
                "text": text if len(text) <= width else text[:width] + " …",
            }
        )
    return pd.DataFrame(rows, columns=["step", "failing", "who", "text"])


def insight_exemplars(
    insight: Insight, runs: pd.DataFrame, traces: Iterable[Trace], n: int = 2, around: int = 2
) -> list[tuple[str, pd.DataFrame]]:
    """Up to `n` (trace id, excerpt) pairs for the failed runs an insight cites."""
    by_id = {t.trace_id: t for t in traces}
    cited = runs[runs["record_id"].isin(list(insight.evidence_refs)) & runs["failed"]]
    out = []
    for row in cited.itertuples():
        trace = by_id.get(str(row.trace_id))
        inputs = row.inputs if isinstance(row.inputs, Mapping) else {}
        step = inputs.get("failing_step", inputs.get("end_step"))
        if trace is None or not isinstance(step, int):
            continue
        out.append((trace.trace_id, trace_excerpt(trace, step, around)))
        if len(out) == n:
            break
    return out


def agent_phase_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Failed, step-annotated runs counted by mistaken agent (rows) × run phase (columns),
    busiest agents first; empty when no run carries a step annotation."""
    annotated = runs[runs["failed"] & runs["mistake_agent"].notna() & runs["phase"].notna()]
    if annotated.empty:
        return pd.DataFrame()
    table = pd.crosstab(annotated["mistake_agent"], annotated["phase"])
    table = table.reindex(columns=[p for p in PHASE_ORDER if p in table.columns])
    table["total"] = table.sum(axis=1)
    return table.sort_values(["total"], ascending=False, kind="stable")


def top_runs_insights(insights: Sequence[Insight], n: int = 5) -> list[Insight]:
    """The `n` run-derived insights with most occurrences (for plots that must stay legible)."""
    runs = [i for i in insights if i.support.get("source") == "runs"]
    return sorted(runs, key=lambda i: (-i.occurrences, i.pattern))[:n]


__all__ = ["agent_phase_table", "insight_exemplars", "top_runs_insights", "trace_excerpt"]
