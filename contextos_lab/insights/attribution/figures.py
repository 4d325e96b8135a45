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
#: Legend wording: what each marker means (the diamond named, as the notebook's text says).
LABELS = {
    "error": "execution error",
    "stall": "stall flagged",
    "loop": "loop flagged",
    "attributed": "attributed step",
    "annotated": "annotated step",
    "end": "run end",
    "limit": "end at a round or time limit (diamond)",
}


def run_timeline(events: pd.DataFrame, max_runs: int = 40) -> Figure | None:
    """Each run's steps on a line with its errors, loop and stall flags, the attributed (and
    annotated) step and its end (a diamond when it hit a round or time limit)."""
    if events.empty:
        return None
    runs = list(dict.fromkeys(events["run"]))[:max_runs]
    row = {r: i for i, r in enumerate(runs)}
    shown = events[events["run"].isin(row)]
    # one row per run at a readable 9 pt; the legend sits inside, right of the last step
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(runs) + 1.8))
    for event, (marker, color) in MARKERS.items():
        part = shown[shown["event"] == event]
        if len(part):
            ax.scatter(
                part["step"], part["run"].map(row), marker=marker, color=color, label=LABELS[event]
            )
    ax.set_yticks(range(len(runs)), [_short(r) for r in runs], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(-0.5, float(shown["step"].max()) * 1.6 + 2)
    ax.set_xlabel("step in the run (turn number)", fontsize=9)
    ax.set_ylabel("run", fontsize=9)
    ax.set_title(f"loops, stalls and limits in {len(runs)} attributed runs", fontsize=10)
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    return fig


def _short(run: object) -> str:
    """A run id a person can tell apart: its last `:` part (the question id), at most 20."""
    text = str(run).rsplit(":", 1)[-1]
    return text if len(text) <= 20 else "…" + text[-19:]


__all__ = ["run_timeline"]
