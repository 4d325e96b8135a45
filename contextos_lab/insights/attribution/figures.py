"""The loop/stall/limit timeline of attributed runs (one row per run), for notebook 01."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

MARKERS = {
    "error": ("x", "tab:red"),
    "stall": ("s", "tab:orange"),
    "loop": ("o", "tab:purple"),
    "attributed": ("^", "tab:blue"),
    "annotated": ("v", "tab:green"),
    "end": ("|", "black"),
    "limit": ("D", "black"),
}


def run_timeline(events: pd.DataFrame, max_runs: int = 40) -> Figure | None:
    """Each run's steps on a line with its errors, loop and stall flags, the attributed (and
    annotated) step and its end (a diamond when it hit a round or time limit)."""
    if events.empty:
        return None
    runs = list(dict.fromkeys(events["run"]))[:max_runs]
    row = {r: i for i, r in enumerate(runs)}
    shown = events[events["run"].isin(row)]
    fig, ax = plt.subplots(figsize=(9, 0.25 * len(runs) + 1.5))
    for event, (marker, color) in MARKERS.items():
        part = shown[shown["event"] == event]
        if len(part):
            ax.scatter(part["step"], part["run"].map(row), marker=marker, color=color, label=event)
    ax.set_yticks(range(len(runs)), [str(r)[-24:] for r in runs], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("step")
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.08 - 1.0 / (len(runs) + 4)), ncol=7, fontsize=7
    )
    fig.tight_layout()
    return fig


__all__ = ["run_timeline"]
