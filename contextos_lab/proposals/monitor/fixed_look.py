"""The monitor's rule before issue 42, kept only as the benchmark's comparison: a fresh
two-sided Mann–Whitney U at ALPHA per evaluator on every call, with no correction for the five
evaluators nor for looking again tomorrow (daily use rolled back ~30 % of null releases)."""

from __future__ import annotations

import numpy as np
from scipy.stats import mannwhitneyu

from contextos_lab.proposals.monitor.evidence import beyond_tolerance

ALPHA = 0.05


def fixed_look_worse(name: str, base: np.ndarray, win: np.ndarray) -> bool:
    """The old "worse": p < ALPHA and the move beyond the evaluator's tolerance."""
    if not (base.size and win.size) or np.all(np.concatenate([base, win]) == base[0]):
        return False
    p = float(mannwhitneyu(base, win, alternative="two-sided").pvalue)
    return p < ALPHA and beyond_tolerance(name, float(win.mean() - base.mean()), float(base.mean()))
