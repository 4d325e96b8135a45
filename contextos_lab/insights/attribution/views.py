"""What notebook 01 shows of an attribution: exemplars, agreement with annotations, timelines.

Pure functions over the report's `attributions` frame (search split only, so held-out runs are
in no figure) and the loaded traces. The annotation columns are used here, and only here, to
score the attribution.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from contextos_lab.insights.attribution.mechanisms import display_names
from contextos_lab.insights.attribution.turns import agent_key
from contextos_lab.insights.exemplars import trace_excerpt
from contextos_lab.loaders.otlp import Trace


def cluster_exemplars(
    attributions: pd.DataFrame,
    mechanisms: pd.DataFrame,
    traces: Iterable[Trace],
    per_cluster: int = 1,
    around: int = 2,
) -> list[dict[str, Any]]:
    """Per cluster (largest first) its first runs: the attribution's evidence, its calibrated
    probability and ranked candidate steps, and the trace around the attributed step (▶)."""
    by_id = {t.trace_id: t for t in traces}
    rows = attributions.set_index("record_id")
    out = []
    for cluster in mechanisms.itertuples(index=False):
        for record_id in list(cluster.members)[:per_cluster]:
            a = rows.loc[record_id]
            trace = by_id.get(a["trace_id"])
            if trace is None:
                continue
            out.append(
                {
                    "cluster": cluster.cluster,
                    "title": cluster.title,
                    "trace_id": a["trace_id"],
                    "agent": a["agent"],
                    "step": int(a["step"]),
                    "signal": a["signal"],
                    "signals": a["signals"],
                    "excerpt": trace_excerpt(trace, int(a["step"]), around=around),
                    "probability": a.get("probability"),
                    "low_confidence": bool(a.get("low_confidence")),
                    "candidates": list(a.get("candidates") or []),
                }
            )
    return out


def agreement(attributions: pd.DataFrame) -> dict[str, Any]:
    """Attribution scored against the annotation on the runs that carry one. A partial
    annotation scores what it has: agent accuracy over runs with an annotated agent, step
    accuracy over runs with an annotated step (`annotated_steps` of them)."""
    agents = attributions[attributions["annotated_agent"].notna()]
    steps = attributions[attributions["annotated_step"].notna()]
    n = int(
        (attributions["annotated_agent"].notna() | attributions["annotated_step"].notna()).sum()
    )
    if not n:
        return {"annotated_runs": 0, "agent_accuracy": None, "step_accuracy": None}
    agent_ok = [
        agent_key(str(a)) == agent_key(str(b))
        for a, b in zip(agents["agent"], agents["annotated_agent"], strict=True)
    ]
    step_ok = [
        int(a) == int(b) for a, b in zip(steps["step"], steps["annotated_step"], strict=True)
    ]
    return {
        "annotated_runs": n,
        "agent_accuracy": sum(agent_ok) / len(agent_ok) if agent_ok else None,
        "step_accuracy": sum(step_ok) / len(step_ok) if step_ok else None,
    }


def confusion(attributions: pd.DataFrame, top_n: int = 8) -> pd.DataFrame:
    """Annotated agent (rows) × attributed agent (columns), spelling variants merged; agents
    outside the `top_n` most annotated are pooled as "other"."""
    labelled = attributions[attributions["annotated_agent"].notna()]
    if labelled.empty:
        return pd.DataFrame()
    both = pd.DataFrame(
        {
            "agent": [*labelled["agent"], *labelled["annotated_agent"].astype(str)],
            "agent_key": [
                agent_key(str(a)) for a in [*labelled["agent"], *labelled["annotated_agent"]]
            ],
        }
    )
    names = display_names(both)
    annotated = labelled["annotated_agent"].map(lambda a: names[agent_key(str(a))])
    attributed = labelled["agent"].map(lambda a: names[agent_key(str(a))])
    top = list(annotated.value_counts().index[:top_n])
    keep = lambda s: s.where(s.isin(top), "other")  # noqa: E731
    table = pd.crosstab(
        keep(annotated).rename("annotated agent"),
        keep(attributed).rename("attributed agent"),
        margins=True,
        margins_name="total",
    )
    return table


def timeline_events(attributions: pd.DataFrame) -> pd.DataFrame:
    """One row per event of each attributed run: error, loop, stall, the attributed step, the
    annotated step where there is one, and the run's end (with its ending)."""
    rows = []
    for a in attributions.itertuples(index=False):
        run = a.trace_id
        rows += [{"run": run, "step": s, "event": "error"} for s in a.error_steps]
        rows += [{"run": run, "step": s, "event": "loop"} for s in a.loop_steps]
        rows += [{"run": run, "step": s, "event": "stall"} for s in a.stall_steps]
        rows.append({"run": run, "step": a.step, "event": "attributed"})
        if a.annotated_step is not None:
            rows.append({"run": run, "step": int(a.annotated_step), "event": "annotated"})
        end = "limit" if a.limit else "end"
        rows.append({"run": run, "step": a.n_steps - 1, "event": end})
    return pd.DataFrame(rows, columns=["run", "step", "event"])


__all__ = ["agreement", "cluster_exemplars", "confusion", "timeline_events"]
