"""Racing one trial through growing stratified subsets of the search set (multi-fidelity).

irace's racing and successive halving, adapted to several objectives with floor constraints:
a config first runs on a small stratified subset (the smoke stage, which also catches configs
that error or breach a floor), then on larger ones, and reaches the full search set only while
it can still be on the feasible Pareto front. After each stage every evaluator's full-set mean
gets a confidence interval (z standard errors with the finite-population correction: the subset
is drawn without replacement from the set whose mean counts, so the interval shrinks to the
exact value at the full set), intersected with the hard bounds the unseen cases allow. A config
is dropped only on evidence:

  * a floor's optimistic bound is below the floor (one violation proves it for a 1.0 floor),
  * an accepted delta is breached even at the optimistic bound, or
  * its optimistic objective vector is dominated by a fully evaluated feasible trial.

A dropped trial ends PRUNED (Optuna's state for "stopped early"; `Trial.report` is single-
objective only) with `racing` user attrs: stage reached, cases run, partial estimates and
bounds, and why. Its constraints are set from the partial estimates plus `racing_drop` > 0,
so every sampler that reads constraints (TPE's infeasible group, ranked by total violation)
learns it was not worth completing, while no partial estimate is ever told as an objective
value. Only a config that completes the full set gets values and can reach the gate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from contextos_lab.autotune.cases import CaseSet
from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.fidelity import RacingSchedule
from contextos_lab.autotune.objective import HarnessFailure, constraint_values, evaluate_cases
from contextos_lab.autotune.pareto import normalised_losses
from contextos_lab.harness.repeat_scores import RepeatScores
from contextos_lab.schemas.base import sha256_hex
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Per-case score ranges (Scorecard's field bounds): what an unseen case can add at most.
SCORE_BOUNDS: dict[str, tuple[float, float]] = {
    "policy": (0.0, 1.0),
    "safety": (0.0, 1.0),
    "utility": (0.0, 1.0),
    "latency": (0.0, math.inf),
    "economics": (0.0, math.inf),
}
#: A dropped trial's `racing_drop` constraint is at least this (strictly infeasible).
MIN_DROP_MARGIN = 1e-9

_ORDERS: dict[tuple[str, int, str], np.ndarray] = {}


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


def racing_seed(ctx: RunContext) -> int:
    if ctx.spec.racing.seed is not None:
        return ctx.spec.racing.seed
    return ctx.spec.sampler.seed if ctx.spec.sampler.seed is not None else 0


def case_order(search: CaseSet, schedule: RacingSchedule, seed: int) -> np.ndarray:
    """Row positions of the search set in racing order; every prefix is a stratified sample.

    Keyed on case content hashes (not row order), so every worker of a study, and a rerun with
    the same seed, races on the same subsets. Within each stratum cases are shuffled by hash;
    case i of a stratum of size m sits at (i + 0.5) / m, so any prefix holds each stratum in
    proportion to its size.
    """
    keys = np.array([int(sha256_hex(f"{seed}:{h}")[:15], 16) for h in search.case_hashes])
    cols = list(schedule.stratify_by)
    if cols:
        strata = search.cases[cols].astype(str).agg("\x1f".join, axis=1).to_numpy()
    else:
        strata = np.zeros(len(keys), dtype=object)
    position = np.empty(len(keys))
    for stratum in pd.unique(strata):
        members = np.flatnonzero(strata == stratum)
        ranked = members[np.argsort(keys[members], kind="stable")]
        position[ranked] = (np.arange(len(ranked)) + 0.5) / len(ranked)
    return np.lexsort((keys, position))


def _order(ctx: RunContext) -> np.ndarray:
    seed = racing_seed(ctx)
    key = (ctx.search.digest, seed, ctx.spec.racing.model_dump_json())
    if key not in _ORDERS:
        _ORDERS[key] = case_order(ctx.search, ctx.spec.racing, seed)
    return _ORDERS[key]


def estimate(per_case: pd.DataFrame, n_total: int, z: float) -> Estimate:
    """Means and z-level bounds on each evaluator's mean over all `n_total` cases, clipped to
    the range the unseen cases allow (finite-population corrected: exact at the full set).

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
            half = z * s / math.sqrt(n) * math.sqrt(rest / (n_total - 1))
            lo, hi = m - half, m + half
        if rest > 0:
            total = float(x.sum())
            lo = max(lo, (total + rest * b_lo) / n_total)
            hi = min(hi, (total + rest * b_hi) / n_total)
        mean[name], low[name], high[name] = m, lo, hi
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


def feasible_values(study: optuna.Study) -> np.ndarray:
    """Objective values of the study's complete, feasible trials (the front to beat)."""
    rows = [
        t.values
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if t.constraints and all(v <= 0 for v in t.constraints.values())
    ]
    return np.asarray(rows, dtype=float)


def drop_reason(
    ctx: RunContext, est: Estimate, baseline: Mapping[str, float], front: np.ndarray
) -> tuple[str, float] | None:
    """(why, margin > 0) when the evidence says the config cannot reach the feasible front."""
    for name, floor in ctx.spec.guardrails.floors.model_dump().items():
        if floor - est.high[name] > MIN_DROP_MARGIN:  # evidence, not float rounding
            return (
                f"floor {name}: at most {est.high[name]:.6g} on the full set "
                f"(mean {est.mean[name]:.6g} on {est.n} cases) < {floor}",
                floor - est.high[name],
            )
    for name, delta in ctx.spec.guardrails.accepted_deltas.model_dump().items():
        if delta is None:
            continue
        best = est.optimistic(name)
        worse = baseline[name] - best
        if DIRECTIONS[EvaluatorName(name)] == "minimize":
            worse = -worse
        if worse - delta > 0:
            return (
                f"accepted delta {name}: regresses by at least {worse:.6g} "
                f"(> {delta}) from the baseline",
                worse - delta,
            )
    if len(front):
        objectives = [e.value for e in ctx.spec.objectives]
        best = normalised_losses(np.array([[est.optimistic(n) for n in objectives]]), ctx.spec)
        known = normalised_losses(front, ctx.spec)
        dominating = np.all(known <= best, axis=1)
        if dominating.any():
            margin = float(np.max(np.min(best - known[dominating], axis=1)))
            return (
                f"dominated: even its optimistic bounds are dominated by "
                f"{int(dominating.sum())} fully evaluated feasible trial(s)",
                max(margin, MIN_DROP_MARGIN),
            )
    return None


def race(
    ctx: RunContext, trial: optuna.Trial, params: Mapping[str, Any], baseline: Mapping[str, float]
) -> dict[str, Any]:
    """`score_config`'s outcome once the config completes the full set; otherwise record the
    drop on the trial and raise `optuna.TrialPruned`."""
    n_total = len(ctx.search)
    sizes = ctx.spec.racing.sizes(n_total)
    order = _order(ctx)
    config = ctx.space.config(params)
    parts: list[pd.DataFrame] = []
    stages: list[RepeatScores] = []
    n_errors, harness_s, done = 0, 0.0, 0
    for stage, size in enumerate(sizes, start=1):
        rows = order[done:size]
        scored, errs, secs = evaluate_cases(ctx, ctx.search.cases.iloc[rows], config)
        stages.append(scored)
        parts.append(scored.per_case.set_axis(rows, axis=0))
        n_errors, harness_s, done = n_errors + errs, harness_s + secs, size
        if size == n_total:
            break
        est = estimate(pd.concat(parts), n_total, ctx.spec.racing.z)
        if any(v != v for v in est.mean.values()):
            raise HarnessFailure(f"evaluation produced NaN scores {est.mean}")
        verdict = drop_reason(ctx, est, baseline, feasible_values(trial.study))
        if verdict is not None:
            _record_drop(ctx, trial, est, stage, sizes, baseline, verdict, n_errors)
            raise optuna.TrialPruned(verdict[0])
    full = pd.concat(parts).sort_index()  # the search set's own row order: same sums as full
    scores = {name: float(full[name].mean()) for name in full.columns}
    merged = RepeatScores(
        long=pd.concat([s.long for s in stages]),
        per_case=full,
        pass_k=pd.concat([s.pass_k for s in stages]),
        repeats=stages[0].repeats,
    )
    if any(v != v for v in scores.values()):
        raise HarnessFailure(f"evaluation produced NaN scores {scores}")
    trial.set_user_attr(
        "racing",
        {"stage": len(sizes), "n_stages": len(sizes), "stage_sizes": sizes,
         "case_evaluations": n_total, "dropped": None},
    )  # fmt: skip
    return {
        "scores": scores,
        "n_case_errors": n_errors,
        "error_rate": merged.error_rate,
        "harness_s": harness_s,
        "repeats": merged.summary(),
    }


def _record_drop(
    ctx: RunContext,
    trial: optuna.Trial,
    est: Estimate,
    stage: int,
    sizes: list[int],
    baseline: Mapping[str, float],
    verdict: tuple[str, float],
    n_errors: int,
) -> None:
    reason, margin = verdict
    trial.set_user_attr(
        "racing",
        {
            "stage": stage,
            "n_stages": len(sizes),
            "stage_sizes": sizes,
            "case_evaluations": est.n,
            "dropped": reason,
            "n_case_errors": n_errors,
            "estimates": {k: round(v, 9) for k, v in est.mean.items()},
            "bounds": {k: [round(est.low[k], 9), round(est.high[k], 9)] for k in est.mean},
        },
    )
    for name, value in constraint_values(ctx, est.mean, baseline).items():
        trial.set_constraint(name, value)
    trial.set_constraint("racing_drop", margin)


def case_evaluations(trial: optuna.trial.FrozenTrial) -> int:
    """Cases a finished trial ran (its racing stage, or the whole set it recorded)."""
    racing = trial.user_attrs.get("racing")
    if racing:
        return int(racing["case_evaluations"])
    return int(trial.user_attrs.get("search_set", {}).get("n_cases", 0))
