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

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.pareto import hypervolume, normalised_losses
from contextos_lab.autotune.racing.references import Reference
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Prefix of the reason a not-promoted trial records (its `racing.dropped`).
NOT_PROMOTED = "not promoted"
#: In the reason of a config stopped only because its estimated gain is under the bar.
UNDER_BAR = "under the promotion bar"
#: The typed flag (in a trial's `racing` attribute) `promotion_bar` counts: never the text.
UNDER_BAR_ATTR = "under_bar"


@dataclass(frozen=True)
class NotPromoted:
    """Why a config stops as not promoted; `under_bar` when only the bar stopped it (its
    point estimate does add feasible hypervolume, a sliver), which `promotion_bar` counts."""

    reason: str
    under_bar: bool


def promotes_on_estimate(ctx: RunContext, trial: optuna.Trial) -> bool:
    """The spec's rule, except for a config someone enqueued: they asked for its evaluation."""
    return ctx.spec.racing.promotion == "estimated_gain" and "proposer" not in trial.user_attrs


def point_estimate(per_case: pd.DataFrame, nearest: Reference) -> dict[str, float]:
    """Each evaluator's full-set mean by the regression estimator on the nearest completed
    trial (Cochran, Sampling Techniques, ch. 7): the prefix mean plus `beta` times how far
    that trial's exact mean sits from its own prefix mean, `beta` the slope of the
    candidate's scores on the trial's over the cases run, clipped to [0, 1] (its raw prefix
    mean where the trial lacks the evaluator).

    `beta` = 1 is the plain paired estimate: right when the two agree case by case (a knob
    that does nothing: a twin is estimated at its twin's exact mean). Where they share no
    case effect (an LLM's noise, drawn per config) the paired estimate hands the reference's
    own luck on the prefix to every candidate: on the stand-in, seed 0's baseline scored
    utility 0.583 on the 12-case smoke stage against 0.486 on the set, so every config paired
    with it was estimated about 0.1 low and 432 of 470 stopped as not promoted (the study
    stalled at 0.90 of the true front). There `beta` is near 0 and the estimate near the
    prefix's own mean, which the stratified racing order keeps unbiased."""
    return {name: mean for name, (mean, _) in _regression(per_case, nearest).items()}


def promotion_estimate(
    per_case: pd.DataFrame,
    nearest: Reference,
    n_total: int,
    z: float,
    run_var: Mapping[str, float],
) -> dict[str, float]:
    """The vector promotion judges: each evaluator whose runs are noisy (`run_var` > 0: a
    case's repeats disagree, `run_variance`) moved `z` standard errors of its regression
    estimate its better way (the spread of the residuals x - beta * r, finite-population
    corrected: gone once every case has run); every other evaluator at its point estimate.

    Why: on a noisy harness with a dense front a config on the true front adds a sliver its
    12-case estimate misses about half the time, at every look, and a config's runs are
    seeded, so the same config proposed again gets the same verdict: a region whose configs
    were all unlucky once is lost to the study. Half a standard error of benefit of the doubt
    keeps most of them while a config clearly behind still stops at the smoke stage; as the
    stages grow the error shrinks and the rule tends to the point estimate's, so it is the
    noise, not a fixed fraction, that decides how far a config goes (stand-in, seeds 0-9: a
    median 5,504 case evaluations to 0.95 of the true front against 6,294.5 without). Where the
    runs do not vary (the deterministic reference harness, or one run per case) pairing leaves
    only a few cases' disagreement, and a doubt from it completed near-twins of the front
    (reference racing's share 0.2588 against 0.2494 on seeds 0-9): no doubt there."""
    out = {}
    n = len(per_case)
    fpc = math.sqrt(max(n_total - n, 0) / max(n_total - 1, 1))
    for name, (mean, sd) in _regression(per_case, nearest).items():
        noisy = run_var.get(name, 0.0) > 0 and n > 1 and math.isfinite(sd)
        step = z * sd / math.sqrt(n) * fpc if noisy else 0.0
        better = DIRECTIONS[EvaluatorName(name)] == "maximize"
        out[name] = mean + step if better else mean - step
    return out


def run_variance(long: pd.DataFrame, repeats: int) -> dict[str, float]:
    """Per evaluator, the variance a case's mean over `repeats` runs owes to run-to-run noise:
    the mean over cases of the variance between its repeats, over `repeats` (`long`: one row
    per case and repeat, indexed by case). Empty with one run per case: nothing measures it."""
    if repeats < 2 or long.empty:
        return {}
    cols = [c for c in long.columns if c in DIRECTIONS]
    within = long[cols].astype(float).groupby(level=0, sort=False).var(ddof=1).mean()
    return {c: float(v) / repeats for c, v in within.items() if v == v and v > 0}


def _regression(per_case: pd.DataFrame, nearest: Reference) -> dict[str, tuple[float, float]]:
    """Per evaluator: the regression estimate of the full-set mean and the standard deviation
    of its per-case residuals (of the raw scores where the reference lacks the evaluator)."""
    n, out = len(per_case), {}
    for name in per_case.columns:
        x = per_case[name].to_numpy(dtype=float)
        ref = nearest.prefix.get(name)
        if ref is None or name not in nearest.means or len(ref) < n:
            out[name] = (float(x.mean()), float(x.std(ddof=1)) if n > 1 else math.inf)
            continue
        r = np.asarray(ref[:n], dtype=float)
        beta = regression_slope(x, r)
        mean = float(x.mean()) + beta * (nearest.means[name] - float(r.mean()))
        out[name] = (mean, float((x - beta * r).std(ddof=1)) if n > 1 else math.inf)
    return out


def regression_slope(x: np.ndarray, r: np.ndarray) -> float:
    """Least-squares slope of `x` on `r`, clipped to [0, 1]; 1 where `r` does not vary (a
    reference constant on the prefix says nothing of the slope: pair as before)."""
    rc = r - r.mean()
    var = float(rc @ rc)
    if len(r) < 2 or var <= 1e-12 * max(1.0, float(r @ r)):
        return 1.0
    return min(1.0, max(0.0, float((x - x.mean()) @ rc) / var))


def promotion_bar(study: optuna.Study, share: float, patience: int, before: int) -> float:
    """`share` (`racing.promotion_min_gain`) halved once for every `patience` sliver verdicts
    in a row (trials numbered below `before`, in order) that no completed trial interrupts.

    Why: the bar is an opportunity cost. While the sampler still proposes configs that open new
    regions, completing a config for a sliver of hypervolume takes budget from them; once it
    proposes only slivers for `patience` trials running, the slivers are what the front still
    lacks, and a fixed bar would stall the study short of the true front (stand-in, 75 noisy
    front points: racing sat at 0.986 of the true front from 100 to 200 trials' worth of
    case evaluations). Derived from the stored trials, so every worker of a shared study agrees
    and a resumed study picks up where it was."""
    if share <= 0 or patience <= 0:
        return share
    halvings = run = 0
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED))
    for t in sorted(trials, key=lambda t: t.number):
        if t.number >= before:
            break
        if t.state == TrialState.COMPLETE:
            run = 0
            continue
        raced = t.user_attrs.get("racing")  # an attribute edited out of shape counts as none
        if isinstance(raced, dict) and raced.get(UNDER_BAR_ATTR) is True:
            run += 1
            if run == patience:
                halvings, run = halvings + 1, 0
    return share * 0.5**halvings


def not_promoted_reason(
    ctx: RunContext,
    per_case: pd.DataFrame,
    front: list[tuple[np.ndarray, Reference | None]],
    nearest: Reference | None,
    run_var: Mapping[str, float] | None = None,
    bar: float | None = None,
) -> str | None:
    """`not_promoted`'s reason alone (None to promote)."""
    verdict = not_promoted(ctx, per_case, front, nearest, run_var, bar)
    return None if verdict is None else verdict.reason


def not_promoted(
    ctx: RunContext,
    per_case: pd.DataFrame,
    front: list[tuple[np.ndarray, Reference | None]],
    nearest: Reference | None,
    run_var: Mapping[str, float] | None = None,
    bar: float | None = None,
) -> NotPromoted | None:
    """Why not, when the point estimate adds no feasible hypervolume, or less than
    `racing.promotion_min_gain` of the front's own; None to promote.

    On a noisy harness most configs near the front escape weak dominance on a few cases by luck
    in one of several objectives, and each is completed at full price for a sliver of
    hypervolume: on the stand-in LLM harness (75 noisy front points) a clairvoyant racer on
    full-set TPE's own proposals still pays 0.73 of its case evaluations to 0.95 of the true
    front. Asking the estimated gain to be a share of the front's hypervolume stops those,
    while a config that opens a new region (the gains that matter) goes on.

    `bar` is that share as `promotion_bar` has lowered it (None: the spec's own).
    With no completed trial to pair with, or no feasible front yet, every config goes on."""
    if nearest is None or not front:
        return None
    z = ctx.spec.racing.promotion_z
    run_var = run_var or {}
    point = promotion_estimate(per_case, nearest, len(ctx.search), z, run_var)
    objectives = [e.value for e in ctx.spec.objectives]
    shown = ", ".join(f"{n} {point[n]:.4g}" for n in objectives)
    noisy = z > 0 and any(run_var.get(n, 0.0) > 0 for n in objectives)
    what = f"estimate + {z:g} standard error(s)" if noisy else "point estimate"
    how = f"its {what} on {len(per_case)} cases ({shown}; paired with trial #{nearest.number})"
    mine = normalised_losses(np.array([[point[n] for n in objectives]]), ctx.spec)
    known = normalised_losses(np.vstack([values for values, _ in front]), ctx.spec)
    for (_, ref), row in zip(front, known, strict=True):
        if np.all(row <= mine[0]):
            by = f"trial #{ref.number}" if ref is not None else "a front member"
            why = f"{NOT_PROMOTED}: {how} adds no feasible hypervolume (weakly dominated by {by})"
            return NotPromoted(why, under_bar=False)
    share = ctx.spec.racing.promotion_min_gain if bar is None else bar
    if share > 0:
        before = hypervolume(known)
        gain = hypervolume(np.vstack([known, mine])) - before
        if before > 0 and gain < share * before:
            return NotPromoted(
                f"{NOT_PROMOTED}: {how} adds {gain / before:.3%} to the feasible hypervolume "
                f"({UNDER_BAR}, {share:.4%})",
                under_bar=True,
            )
    return None
