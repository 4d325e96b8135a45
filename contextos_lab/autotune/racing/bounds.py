"""Confidence bounds on a config's full-set means from the cases a racing stage has run.

Two kinds, both clipped to what the unseen cases allow and exact once every case has run:

* `estimate`: each evaluator's mean on its own (Wilson for bounded scores, so a subset that
  shows no variance still gets an honest width; a t-style interval for latency and cost).
* `paired`: the same means, bounded through the per-case differences from a reference trial
  (the baseline, or a fully evaluated front member) on the same cases. Two configs of one
  harness mostly agree case by case, so the differences vary far less than the scores (on the
  reference harness the utility difference has a standard deviation of 0.03-0.15 against 0.34
  for utility itself); this is the paired comparison irace and SMAC's intensification race
  with. The interval is never narrower than the Wilson bound on one unseen difference of the
  score's full range (for latency and cost: of the largest difference seen, or one standard
  deviation of the score): 137 identical
  cases do not prove the rest identical.

Every interval is z standard errors wide with the finite-population correction: a stage is a
sample drawn without replacement from the set whose mean counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Per-case score ranges (Scorecard's field bounds): what an unseen case can add at most.
SCORE_BOUNDS: dict[str, tuple[float, float]] = {
    "policy": (0.0, 1.0),
    "safety": (0.0, 1.0),
    "utility": (0.0, 1.0),
    "latency": (0.0, math.inf),
    "economics": (0.0, math.inf),
}


@dataclass(frozen=True)
class Estimate:
    """Full-set means estimated from the first `n` cases of the racing order."""

    n: int
    n_total: int
    mean: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]

    def optimistic(self, name: str) -> float:
        return self.high[name] if DIRECTIONS[EvaluatorName(name)] == "maximize" else self.low[name]

    def intersect(self, other: Estimate) -> Estimate:
        """Both intervals hold (each at its own z): the tighter side of each."""
        low = {k: max(v, other.low.get(k, v)) for k, v in self.low.items()}
        high = {k: min(v, other.high.get(k, v)) for k, v in self.high.items()}
        return Estimate(self.n, self.n_total, dict(self.mean), low, high)


def hard_bounds(x: np.ndarray, n_total: int, name: str) -> tuple[float, float]:
    """The full-set mean if every unseen case scored its lowest / highest possible value."""
    b_lo, b_hi = SCORE_BOUNDS.get(name, (-math.inf, math.inf))
    rest = n_total - len(x)
    total = float(x.sum())
    return (total + rest * b_lo) / n_total, (total + rest * b_hi) / n_total


def _fpc(n: int, n_total: int) -> float:
    """Finite-population correction on a standard error (0 once every case has run)."""
    return math.sqrt(max(n_total - n, 0) / max(n_total - 1, 1))


def estimate(per_case: pd.DataFrame, n_total: int, z: float) -> Estimate:
    """Means and z-level bounds on each evaluator's mean over all `n_total` cases.

    A score bounded to [a, b] gets a Wilson interval: it uses the largest variance a [a, b]
    variable with that mean can have, so a subset that happens to show no variance (30 cases
    that all fail) still gets an honest width. Unbounded scores (latency, cost) use the
    sample standard deviation.
    """
    n = len(per_case)
    rest = n_total - n
    mean, low, high = {}, {}, {}
    for name in per_case.columns:
        x = per_case[name].to_numpy(dtype=float)
        m = float(x.mean())
        b_lo, b_hi = SCORE_BOUNDS.get(name, (-math.inf, math.inf))
        if rest <= 0:
            lo = hi = m
        elif math.isfinite(b_lo) and math.isfinite(b_hi):
            n_eff = n * (n_total - 1) / rest  # finite-population correction on the variance
            lo, hi = _wilson((m - b_lo) / (b_hi - b_lo), n_eff, z)
            lo, hi = b_lo + lo * (b_hi - b_lo), b_lo + hi * (b_hi - b_lo)
        else:
            s = float(x.std(ddof=1)) if n > 1 else math.inf
            half = z * s / math.sqrt(n) * _fpc(n, n_total)
            lo, hi = m - half, m + half
        if rest > 0:
            h_lo, h_hi = hard_bounds(x, n_total, name)
            lo, hi = max(lo, h_lo), min(hi, h_hi)
        mean[name], low[name], high[name] = m, lo, hi
    return Estimate(n=n, n_total=n_total, mean=mean, low=low, high=high)


def paired(
    per_case: pd.DataFrame,
    reference: Mapping[str, np.ndarray],
    reference_means: Mapping[str, float],
    n_total: int,
    z: float,
) -> Estimate:
    """Bounds on the candidate's full-set means through its differences from a reference.

    `per_case` holds the candidate's first n cases in racing order; `reference` the
    reference's scores on at least those cases (same order) and `reference_means` its exact
    full-set means. Evaluators the reference lacks keep unbounded (infinite) sides.
    """
    n = len(per_case)
    rest = n_total - n
    mean, low, high = {}, {}, {}
    for name in per_case.columns:
        x = per_case[name].to_numpy(dtype=float)
        mean[name] = float(x.mean())
        if name not in reference or name not in reference_means or len(reference[name]) < n:
            low[name], high[name] = -math.inf, math.inf
            continue
        r = np.asarray(reference[name][:n], dtype=float)
        d = x - r
        centre = float(reference_means[name]) + float(d.mean())
        if rest <= 0:
            low[name] = high[name] = float(x.mean())
            continue
        s = float(d.std(ddof=1)) if n > 1 else math.inf
        half_t = z * s / math.sqrt(n) * _fpc(n, n_total)
        b_lo, b_hi = SCORE_BOUNDS.get(name, (-math.inf, math.inf))
        if math.isfinite(b_lo) and math.isfinite(b_hi):
            spread = b_hi - b_lo
        else:  # unbounded: no range; an unseen difference is taken to be as large as the
            # largest one seen or the score's own standard deviation, whichever is larger
            spread = max(float(np.abs(d).max()), float(r.std(ddof=1)) if n > 1 else math.inf)
        n_eff = n * (n_total - 1) / rest
        guard = spread * z * z / (n_eff + z * z)  # Wilson's bound on one unseen difference
        half = max(half_t, guard)
        h_lo, h_hi = hard_bounds(x, n_total, name)
        lo, hi = max(centre - half, h_lo), min(centre + half, h_hi)
        low[name], high[name] = min(lo, h_hi), max(hi, h_lo)  # never an empty interval
    return Estimate(n=n, n_total=n_total, mean=mean, low=low, high=high)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval for a mean `p` of [0, 1] values over `n` draws."""
    p = min(1.0, max(0.0, p))
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # at p = 1 (or 0) the bound is exactly 1 (or 0); rounding must not put a spotless subset
    # an ulp below a 1.0 floor
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return low, high
