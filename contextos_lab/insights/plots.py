"""Figures of notebook 01, kept legible on real data: a handful of series, never a 33-entry
legend. Each returns a matplotlib Figure (the notebook displays it inline) or None when there
is nothing honest to draw (no failures; no clock in the data)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from contextos_lab.insights.exemplars import top_runs_insights
from contextos_lab.insights.pipeline import ClusterReport


def failure_bars(report: ClusterReport, top_n: int = 12) -> Figure | None:
    """Failed search-split runs per (decision key, reason class): the biggest `top_n` rows."""
    table = report.failures.head(top_n)
    if table.empty:
        return None
    labels = [
        f"{k} · {r}" for k, r in zip(table["decision_key"], table["reason_class"], strict=True)
    ]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(table) + 1.2))
    colors = ["tab:red" if m else "tab:gray" for m in table["meets_min"]]
    ax.barh(labels[::-1], table["count"].to_numpy()[::-1], color=colors[::-1])
    ax.set_xlabel("failed runs (search split); red = becomes a failure_cluster insight")
    ax.set_title("Where runs fail: decision key (from the task) × failure class")
    fig.tight_layout()
    return fig


def top_timeline(report: ClusterReport, top_n: int = 5) -> Figure | None:
    """Daily occurrences of the `top_n` biggest run-derived insights; None without a clock."""
    timeline = report.timeline()
    if timeline.empty:
        return None
    keep = [f"{i.pattern} ({i.insight_id})" for i in top_runs_insights(report.insights, top_n)]
    timeline = timeline[[c for c in keep if c in timeline.columns]]
    if timeline.empty:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for column in timeline.columns:
        ax.plot(timeline.index, timeline[column].to_numpy(), marker="o", label=column[:60])
    ax.set_xlabel("day (UTC)", fontsize=9)
    ax.set_ylabel("occurrences per day", fontsize=9)
    ax.set_title(f"Top {len(timeline.columns)} run insights over time", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", framealpha=0.9)  # inside: the pane is 9 in wide
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def agent_phase_heatmap(table: pd.DataFrame, top_n: int = 12) -> Figure | None:
    """Failed runs by mistaken agent × phase of the run (busiest `top_n` agents)."""
    if table.empty:
        return None
    data = table.drop(columns=["total"]).head(top_n)
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(data) + 1.5))
    image = ax.imshow(data.to_numpy(), cmap="Reds", aspect="auto")
    ax.set_xticks(range(len(data.columns)), [c.replace("_", " ") for c in data.columns])
    ax.set_yticks(range(len(data.index)), list(data.index))
    for (r, c), value in pd.DataFrame(data.to_numpy()).stack().items():
        ax.text(c, r, str(value), ha="center", va="center", fontsize=8)
    ax.set_title("Who failed, and when in the run")
    fig.colorbar(image, ax=ax, label="failed runs")
    fig.tight_layout()
    return fig


__all__ = ["agent_phase_heatmap", "failure_bars", "top_timeline"]
