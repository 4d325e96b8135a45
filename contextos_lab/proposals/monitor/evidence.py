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


def _untested(b_mean: float, w_mean: float, share: float) -> EvaluatorEvidence:
    return EvaluatorEvidence(
        baseline_mean=b_mean,
        window_mean=w_mean,
        delta=w_mean - b_mean,
        p_value=None,
        worse=False,
        alpha_share=share,
        alpha_spent=0.0,
    )


def sequential_evidence(
    name: str,
    baseline: Sequence[Scorecard],
    days: list[list[Scorecard]],
    frozen: list[MonitorLook],
    n_days: int,
    seed: str,
    running: Sequence[Scorecard],
) -> tuple[EvaluatorEvidence, list[float | None], list[float], list[float]]:
    """The evidence, each look's boundary (None: no crossing possible), each look's Z and the
    error each look spent."""
    base = _values(baseline, name)
    day_vals = [_values(d, name) for d in days]
    looked = np.concatenate(day_vals) if day_vals else np.zeros(0)
    shown = looked if looked.size else _values(running, name)
    b_mean = float(base.mean()) if base.size else 0.0
    w_mean = float(shown.mean()) if shown.size else b_mean
    delta = w_mean - b_mean
    share = seq.SHARES[name]
    if not base.size or not looked.size:  # nothing to test: no look, no error spent
        return _untested(b_mean, w_mean, share), [], [], []
    zs = [float(z) for z in seq.observed_z(name, base, day_vals)]
    bounds, used, p = _walk_looks(name, base, day_vals, frozen, n_days, seed)
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
        alpha_spent=float(sum(used)),
        crossed_day=crossed,
        decisive_day=decisive,
    )
    return evidence, [b if math.isfinite(b) else None for b in bounds], zs, used


def _walk_looks(
    name: str,
    base: np.ndarray,
    day_vals: list[np.ndarray],
    frozen: list[MonitorLook],
    n_days: int,
    seed: str,
) -> tuple[list[float], list[float], float]:
    """Each look's boundary, the error each spent, and the last look's sequential p.

    Looks already in the store keep their boundary and spending (a look recorded before
    spending was stored is taken to have spent its whole increment: never more error than
    allowed); looks not yet recorded are calibrated in order, each with the spending of the
    looks before it, so a caller at day 14 reaches the daily caller's boundaries."""
    bounds: list[float] = []
    used: list[float] = []
    p = 1.0
    last = len(day_vals)
    for k in range(1, last + 1):
        look_k = frozen[k - 1] if k <= len(frozen) else None
        stored = look_k.boundary.get(name, math.nan) if look_k else math.nan
        if k < last and look_k is not None and (stored is None or not math.isnan(stored)):
            bounds.append(math.inf if stored is None else stored)
            share = seq.SHARES[name]
            increment = seq.spent(share, k, n_days) - seq.spent(share, k - 1, n_days)
            used.append(look_k.spent.get(name, increment))
            continue
        look = seq.calibrate_look(
            name, base, day_vals[:k], tuple(bounds), n_days, seed, spent_before=sum(used)
        )
        bounds.append(look.boundary)
        used.append(look.spent)
        p = look.p_value
    return bounds, used, p
