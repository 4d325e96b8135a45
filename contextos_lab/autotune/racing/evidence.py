"""The evidence racing drops a config on after a stage: confidence bounds that breach a floor
or an accepted delta, or optimistic bounds dominated by a completed feasible trial (see
`autotune.racing.racing`, whose stages call `drop_reason`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.pareto import normalised_losses
from contextos_lab.autotune.racing.bounds import Estimate, estimate, paired
from contextos_lab.autotune.racing.references import Reference
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: A dropped trial's `racing_drop` constraint is at least this (strictly infeasible).
MIN_DROP_MARGIN = 1e-9


def drop_reason(
    ctx: RunContext,
    per_case: pd.DataFrame,
    baseline: Mapping[str, float],
    front: list[tuple[np.ndarray, Reference | None]],
    baseline_ref: Reference | None = None,
    nearest: Reference | None = None,
) -> tuple[str, float] | None:
    """(why, margin > 0) when the evidence says the config cannot reach the feasible front:
    a floor breached, else an accepted delta, else domination by the front.

    `nearest` is the completed trial closest to the config case by case (any completed trial,
    feasible or not); its pairing bounds every check, so a config that repeats one already
    evaluated is bounded about that trial's exact means."""
    n_total, z = len(ctx.search), ctx.spec.racing.z
    est = estimate(per_case, n_total, z)
    near = ""
    if nearest is not None:
        est = est.intersect(paired(per_case, nearest.prefix, nearest.means, n_total, z))
        near = f", paired with trial #{nearest.number}"
    return (
        _floor_breach(ctx, est, near)
        or _delta_breach(ctx, per_case, est, baseline, baseline_ref, nearest)
        or _dominated(ctx, per_case, est, front, near)
    )


def _floor_breach(ctx: RunContext, est: Estimate, near: str) -> tuple[str, float] | None:
    """A floor the config's upper bound on the full set stays under."""
    for name, floor in ctx.spec.guardrails.floors.model_dump().items():
        if floor - est.high[name] > MIN_DROP_MARGIN:  # evidence, not float rounding
            return (
                f"floor {name}: at most {est.high[name]:.6g} on the full set "
                f"(mean {est.mean[name]:.6g} on {est.n} cases{near}) < {floor}",
                floor - est.high[name],
            )
    return None


def _delta_breach(
    ctx: RunContext,
    per_case: pd.DataFrame,
    est: Estimate,
    baseline: Mapping[str, float],
    baseline_ref: Reference | None,
    nearest: Reference | None,
) -> tuple[str, float] | None:
    """An accepted delta the config regresses past even at its optimistic bound (paired with
    the baseline case by case when its per-case scores are known)."""
    vs_base, with_base = est, f", paired with trial #{nearest.number}" if nearest else ""
    if baseline_ref is not None:
        n_total, z = len(ctx.search), ctx.spec.racing.z
        vs_base = est.intersect(paired(per_case, baseline_ref.prefix, baseline, n_total, z))
        with_base = ", paired with the baseline"
        if nearest is not None and nearest.number != baseline_ref.number:
            with_base += f" and trial #{nearest.number}"
    for name, delta in ctx.spec.guardrails.accepted_deltas.model_dump().items():
        if delta is None:
            continue
        best = vs_base.optimistic(name)
        worse = baseline[name] - best
        if DIRECTIONS[EvaluatorName(name)] == "minimize":
            worse = -worse
        if worse - delta > 0:
            return (
                f"accepted delta {name}: regresses by at least {worse:.6g} "
                f"(> {delta}) from the baseline on {est.n} cases{with_base}",
                worse - delta,
            )
    return None


def _dominated(
    ctx: RunContext,
    per_case: pd.DataFrame,
    est: Estimate,
    front: list[tuple[np.ndarray, Reference | None]],
    near: str,
) -> tuple[str, float] | None:
    """Fully evaluated feasible trials that dominate even the config's optimistic bounds."""
    n_total, z = len(ctx.search), ctx.spec.racing.z
    objectives = [e.value for e in ctx.spec.objectives]
    dominating, margin, by_pairs = 0, 0.0, 0
    for values, ref in front:
        opt = est
        if ref is not None:
            opt = est.intersect(paired(per_case, ref.prefix, ref.means, n_total, z))
        best = normalised_losses(np.array([[opt.optimistic(n) for n in objectives]]), ctx.spec)
        known = normalised_losses(values[None, :], ctx.spec)
        if np.all(known <= best):
            dominating += 1
            by_pairs += ref is not None
            margin = max(margin, float(np.min(best - known)))
    if not dominating:
        return None
    how = (f", {by_pairs} of them case by case" if by_pairs else "") + near
    return (
        f"dominated: even its optimistic bounds on {est.n} cases are dominated by "
        f"{dominating} fully evaluated feasible trial(s){how}",
        max(margin, MIN_DROP_MARGIN),
    )
