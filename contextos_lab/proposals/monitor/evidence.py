"""Per-evaluator sequential evidence over the window's calendar looks (issue 42).

For each evaluator: Z at every completed look, its boundary (frozen ones from the store, new
ones calibrated by `sequential.calibrate_look`), the first look crossed, the sequential p, the
repeated confidence interval of the difference and the day the boundary would be crossed at the
current rate. "Worse" = a boundary crossed *and* the difference at that look beyond the
evaluator's tolerance (floors: any drop; utility: more than UTILITY_TOLERANCE; latency and
cost: a rise of more than COST_REL_TOLERANCE of the baseline mean). The tolerance only narrows
the rule, so the error stays within the evaluator's share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from contextos_lab.proposals.monitor import sequential as seq
from contextos_lab.schemas.monitoring import EvaluatorEvidence, MonitorLook
from contextos_lab.schemas.scorecard import Scorecard

UTILITY_TOLERANCE = 0.05
COST_REL_TOLERANCE = 0.20
#: Monitor evaluator name → Scorecard field (seed 000 calls economics "cost").
FIELDS = {
    "policy": "policy",
    "safety": "safety",
    "utility": "utility",
    "latency": "latency",
    "cost": "economics",
}


def beyond_tolerance(name: str, delta: float, base_mean: float) -> bool:
    if name in ("policy", "safety"):
        return delta < 0
    if name == "utility":
        return delta < -UTILITY_TOLERANCE
    return delta > COST_REL_TOLERANCE * abs(base_mean)


def _values(cards: Sequence[Scorecard], name: str) -> np.ndarray:
    return np.array([getattr(c, FIELDS[name]) for c in cards], dtype=float)


def sequential_evidence(
    name: str,
    baseline: Sequence[Scorecard],
    days: list[list[Scorecard]],
    frozen: list[MonitorLook],
    n_days: int,
    seed: str,
    running: Sequence[Scorecard],
) -> tuple[EvaluatorEvidence, list[float | None], list[float]]:
    """The evidence, each look's boundary (None: no crossing possible) and each look's Z."""
    base = _values(baseline, name)
    day_vals = [_values(d, name) for d in days]
    looked = np.concatenate(day_vals) if day_vals else np.zeros(0)
    shown = looked if looked.size else _values(running, name)
    b_mean = float(base.mean()) if base.size else 0.0
    w_mean = float(shown.mean()) if shown.size else b_mean
    delta = w_mean - b_mean
    share = seq.SHARES[name]
    if not base.size or not looked.size:
        return (
            EvaluatorEvidence(
                baseline_mean=b_mean,
                window_mean=w_mean,
                delta=delta,
                p_value=None,
                worse=False,
                alpha_share=share,
                alpha_spent=0.0,
            ),
            [],
            [],
        )
    zs = [float(z) for z in seq.observed_z(name, base, day_vals)]
    bounds: list[float] = []
    p = 1.0
    for k in range(1, len(days) + 1):
        stored = frozen[k - 1].boundary.get(name, math.nan) if k <= len(frozen) else math.nan
        if k < len(days) and stored is not None and not math.isnan(stored):
            bounds.append(stored)
            continue
        if k < len(days) and stored is None:
            bounds.append(math.inf)
            continue
        look = seq.calibrate_look(name, base, day_vals[:k], tuple(bounds), n_days, seed)
        bounds.append(look.boundary)
        p = look.p_value
    crossed = next((k for k, (z, b) in enumerate(zip(zs, bounds, strict=True), 1) if z > b), None)
    worse = False
    if crossed is not None:
        at = np.concatenate(day_vals[:crossed])
        worse = beyond_tolerance(name, float(at.mean()) - b_mean, b_mean)
    _, var_s = seq.smoothed_baseline(name, base)
    last_b = bounds[-1]
    se = math.sqrt(var_s * (1 / base.size + 1 / looked.size))
    half = last_b * se if math.isfinite(last_b) and last_b > 0 else None
    per_day = looked.size / len(days)
    decisive = crossed or seq.decisive_day(
        seq.HARM_SIGN[name], delta, var_s, base.size, per_day, len(days) + 1, n_days, last_b
    )
    constant = np.unique(np.concatenate([base, looked])).size == 1
    evidence = EvaluatorEvidence(
        baseline_mean=b_mean,
        window_mean=w_mean,
        delta=delta,
        p_value=None if constant else p,
        worse=bool(worse),
        z=zs[-1],
        boundary=last_b if math.isfinite(last_b) else None,
        ci_low=None if half is None else delta - half,
        ci_high=None if half is None else delta + half,
        alpha_share=share,
        alpha_spent=seq.spent(share, len(days), n_days),
        crossed_day=crossed,
        decisive_day=decisive,
    )
    return evidence, [b if math.isfinite(b) else None for b in bounds], zs
