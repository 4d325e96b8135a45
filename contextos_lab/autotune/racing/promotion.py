"""Which configs that can still reach the front go on to the next racing stage.

Racing's drops (`racing.drop_reason`) need evidence: a bound that breaches a floor or an
accepted delta, or optimistic bounds dominated by a completed trial. A config that merely repeats
a front member (a knob that does nothing on this set), or sits just behind it, is never proved
worse that way, and with `promotion: possible` it is completed on the full set at full price.

`promotion: estimated_gain` adds successive halving's rule, for several objectives with floors:
a config goes on only while its point estimate (the nearest completed trial's exact means plus
the mean paired difference on the cases run) adds feasible hypervolume: is not weakly dominated
by the feasible front. Floors and accepted deltas stay with the evidence checks: a point estimate
just past a delta is what the rarest front points look like on a few cases (on the reference
harness, judging those at the point estimate too left racing at 0.9863 and 0.9884 of the true
front at 100 trials' worth of cases on seeds 0 and 1; without, 0.9999 on seeds 0 and 3).

The rest stop as *not promoted*: PRUNED with their bounds, recorded apart from evidence drops,
never proved worse, and `contextos-lab enqueue` completes any of them on request (an enqueued
config is dropped only when proved infeasible).
"""

from __future__ import annotations

import numpy as np
import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.pareto import hypervolume, normalised_losses
from contextos_lab.autotune.racing.references import Reference

#: Prefix of the reason a not-promoted trial records (its `racing.dropped`).
NOT_PROMOTED = "not promoted"


def promotes_on_estimate(ctx: RunContext, trial: optuna.Trial) -> bool:
    """The spec's rule, except for a config someone enqueued: they asked for its evaluation."""
    return ctx.spec.racing.promotion == "estimated_gain" and "proposer" not in trial.user_attrs


def point_estimate(per_case: pd.DataFrame, nearest: Reference) -> dict[str, float]:
    """Each evaluator's full-set mean, estimated through the paired differences from the
    nearest completed trial (its raw mean on the cases run where that trial lacks it)."""
    n, out = len(per_case), {}
    for name in per_case.columns:
        x = per_case[name].to_numpy(dtype=float)
        ref = nearest.prefix.get(name)
        if ref is None or name not in nearest.means or len(ref) < n:
            out[name] = float(x.mean())
        else:
            out[name] = nearest.means[name] + float((x - np.asarray(ref[:n], dtype=float)).mean())
    return out


def not_promoted_reason(
    ctx: RunContext,
    per_case: pd.DataFrame,
    front: list[tuple[np.ndarray, Reference | None]],
    nearest: Reference | None,
) -> str | None:
    """Why not, when the point estimate adds no feasible hypervolume, or less than
    `racing.promotion_min_gain` of the front's own; None to promote.

    On a noisy harness most configs near the front escape weak dominance on a few cases by luck
    in one of several objectives, and each is completed at full price for a sliver of
    hypervolume: on the stand-in LLM harness (75 noisy front points) a clairvoyant racer on
    full-set TPE's own proposals still pays 0.73 of its case evaluations to 0.95 of the true
    front. Asking the estimated gain to be a share of the front's hypervolume stops those,
    while a config that opens a new region (the gains that matter) goes on.

    With no completed trial to pair with, or no feasible front yet, every config goes on."""
    if nearest is None or not front:
        return None
    point = point_estimate(per_case, nearest)
    objectives = [e.value for e in ctx.spec.objectives]
    shown = ", ".join(f"{n} {point[n]:.4g}" for n in objectives)
    how = (
        f"its point estimate on {len(per_case)} cases ({shown}; paired with trial "
        f"#{nearest.number})"
    )
    mine = normalised_losses(np.array([[point[n] for n in objectives]]), ctx.spec)
    known = normalised_losses(np.vstack([values for values, _ in front]), ctx.spec)
    for (_, ref), row in zip(front, known, strict=True):
        if np.all(row <= mine[0]):
            by = f"trial #{ref.number}" if ref is not None else "a front member"
            return f"{NOT_PROMOTED}: {how} adds no feasible hypervolume (weakly dominated by {by})"
    share = ctx.spec.racing.promotion_min_gain
    if share > 0:
        before = hypervolume(known)
        gain = hypervolume(np.vstack([known, mine])) - before
        if before > 0 and gain < share * before:
            return (
                f"{NOT_PROMOTED}: {how} adds {gain / before:.3%} to the feasible hypervolume "
                f"(< {share:.3%})"
            )
    return None
