"""Racing one trial through growing stratified subsets of the search set (multi-fidelity).

irace's racing and successive halving, adapted to several objectives with floor constraints:
a config first runs on a small stratified subset (the smoke stage, which also catches configs
that error or breach a floor), then on larger ones, and reaches the full search set only while
it can still be on the feasible Pareto front. After each stage every evaluator's full-set mean
gets confidence bounds (`autotune.racing.bounds`): on its own, and paired case by case with the
baseline, with each fully evaluated front member and with the completed trial nearest to it,
whose scores on the racing prefix are kept on their trials (`autotune.racing.references`). A
config is dropped only on evidence:

  * a floor's optimistic bound is below the floor (one violation proves it for a 1.0 floor),
  * an accepted delta is breached even at the optimistic bound (paired with the baseline and
    the nearest completed trial), or
  * its optimistic objective vector is dominated by a fully evaluated feasible trial (paired
    with that trial where its prefix is known).

Between those looks a subset stage runs in rounds of doubling size (`racing.rounds`; the full
set runs whole), and after each round only exact checks run (`autotune.racing.proof`): a
floor, error rate or accepted delta the cases already run breach whatever the unseen ones
would score. A config that fails a 1.0 floor on its third case stops after the round that
holds it, not after the whole stage.

With `promotion: estimated_gain` a config that survives those checks goes on only
while its point estimate adds feasible hypervolume (`autotune.racing.promotion`); otherwise it
stops as *not promoted*, recorded apart from the drops above. A config someone enqueued
(`contextos-lab enqueue`, user attr `proposer`) is only dropped when proved infeasible.

A dropped trial ends PRUNED (Optuna's state for "stopped early"; `Trial.report` is single-
objective only) with `racing` user attrs: stage reached, cases run, partial estimates and
bounds, and why. Its constraints are set from the partial estimates plus `racing_drop` > 0,
so every sampler that reads constraints (TPE's infeasible group, ranked by total violation)
learns it was not worth completing, while no partial estimate is ever told as an objective
value. Only a config that completes the full set gets values and can reach the gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.objective import (
    ScoringFailure,
    check_scores,
    constraint_values,
    evaluate_cases,
)
from contextos_lab.autotune.racing.bounds import Estimate, estimate
from contextos_lab.autotune.racing.evidence import MIN_DROP_MARGIN, drop_reason
from contextos_lab.autotune.racing.order import case_order, order_key, racing_order, racing_seed
from contextos_lab.autotune.racing.promotion import (
    UNDER_BAR_ATTR,
    NotPromoted,
    not_promoted,
    promotes_on_estimate,
    promotion_bar,
    promotion_estimate,
    run_variance,
)
from contextos_lab.autotune.racing.proof import proven_breach
from contextos_lab.autotune.racing.references import (
    Reference,
    baseline_reference,
    completed_references,
    feasible_front,
    keep_reference,
    nearest_reference,
)
from contextos_lab.harness.repeat_scores import MAY_BE_UNSCORED, UNMEASURED, RepeatScores

__all__ = ["case_evaluations", "case_order", "drop_reason", "order_key", "race", "racing_seed"]

def race(
    ctx: RunContext,
    trial: optuna.Trial,
    params: Mapping[str, Any],
    baseline: Mapping[str, float] | None,
) -> dict[str, Any]:
    """`score_config`'s outcome once the config completes the full set; otherwise record the
    drop on the trial and raise `optuna.TrialPruned`. The baseline (`baseline` None) runs
    every stage and is never dropped: it is the reference the others are paired with."""
    run = _Race(
        ctx,
        trial,
        baseline,
        config=ctx.space.config(params),
        sizes=ctx.spec.racing.sizes(len(ctx.search)),
        order=racing_order(ctx),
        key=order_key(ctx),
        baseline_ref=None if baseline is None else baseline_reference(trial.study, order_key(ctx)),
        concurrency=ctx.spec.execution_policy().concurrency_for(ctx.harness),
    )
    for stage, size in enumerate(run.sizes, start=1):
        run.run_stage(stage, size)
        if size < run.n_total and baseline is not None:
            run.judge_stage(stage, baseline)
    return run.outcome()


@dataclass
class _Race:
    """One trial's race in progress: the stages run so far, their scores and what they cost."""

    ctx: RunContext
    trial: optuna.Trial
    baseline: Mapping[str, float] | None
    config: dict[str, Any]
    sizes: list[int]
    order: np.ndarray
    key: str
    baseline_ref: Reference | None
    concurrency: int
    parts: list[pd.DataFrame] = field(default_factory=list)
    stages: list[RepeatScores] = field(default_factory=list)
    n_errors: int = 0
    harness_s: float = 0.0
    done: int = 0

    @property
    def n_total(self) -> int:
        return len(self.ctx.search)

    def run_stage(self, stage: int, size: int) -> None:
        """Run the stage's cases up to `size`. Rounds end a subset stage early on a proven
        breach (`optuna.TrialPruned`). The full set runs whole: a config that got there
        completes with exact scores (and a set smaller than the smoke stage races as full
        fidelity); the baseline, never dropped, takes one call a stage. A stage whose every
        run errored is a harness failure (`ScoringFailure`), not a breach."""
        ctx, baseline = self.ctx, self.baseline
        rounds = baseline is not None and size < self.n_total
        ends = ctx.spec.racing.round_ends(self.done, size, self.concurrency) if rounds else [size]
        stage_runs, stage_errors, first_error = 0, 0, None
        for end in ends:
            rows = self.order[self.done : end]
            got = evaluate_cases(ctx, ctx.search.cases.iloc[rows], self.config)
            self.stages.append(got.scored)
            self.parts.append(got.scored.per_case.set_axis(rows, axis=0))
            self.n_errors, self.harness_s = (
                self.n_errors + got.n_errors,
                self.harness_s + got.wall_s,
            )
            self.done = end
            stage_runs += len(got.scored.long)
            stage_errors += got.n_errors
            first_error = first_error or got.first_error
            if end < size and baseline is not None and stage_errors < stage_runs:
                self._drop_on_proof(stage, baseline)
        if stage_runs and stage_errors == stage_runs:
            raise ScoringFailure.errored(first_error)

    def _drop_on_proof(self, stage: int, baseline: Mapping[str, float]) -> None:
        """After a round: drop on a breach the cases already run prove (`racing.proof`)."""
        so_far = _scored_so_far(self.parts)
        proof = proven_breach(self.ctx, so_far, baseline, self.n_errors, self.ctx.spec.repeats)
        if proof is not None:
            est = estimate(so_far, self.n_total, self.ctx.spec.racing.z)
            _record_drop(self.ctx, self.trial, est, stage, self.sizes, baseline, proof,
                         self.n_errors)  # fmt: skip
            raise optuna.TrialPruned(proof[0])

    def judge_stage(self, stage: int, baseline: Mapping[str, float]) -> None:
        """After a subset stage: drop on evidence (`drop_reason`, else a certain breach), or
        stop the config as not promoted (`racing.promotion`); return to go on."""
        ctx, trial, rc = self.ctx, self.trial, self.ctx.spec.racing
        so_far = _scored_so_far(self.parts)
        near = nearest_reference(so_far, completed_references(trial.study, self.key))
        # an outside proposal is dropped only when proved infeasible: the gate judges a
        # feasible one whether or not it is on the front (autotune.study.enqueue)
        front = [] if "proposer" in trial.user_attrs else feasible_front(trial.study, self.key)
        verdict = drop_reason(ctx, so_far, baseline, front, self.baseline_ref, near)
        if verdict is None:  # what the statistics leave open, a certain breach still drops
            verdict = proven_breach(ctx, so_far, baseline, self.n_errors, ctx.spec.repeats)
        if verdict is not None:
            est = estimate(so_far, self.n_total, rc.z)
            _record_drop(ctx, trial, est, stage, self.sizes, baseline, verdict, self.n_errors)
            raise optuna.TrialPruned(verdict[0])
        if not promotes_on_estimate(ctx, trial):
            return
        run_var = run_variance(pd.concat([s.long for s in self.stages]), ctx.spec.repeats)
        bar = promotion_bar(trial.study, rc.promotion_min_gain, rc.promotion_patience, trial.number)
        stop = not_promoted(ctx, so_far, front, near, run_var, bar)
        if stop is None:
            return
        est = estimate(so_far, self.n_total, rc.z)
        # what promotion judged, paired (`not_promoted` stops nothing without a `near`)
        point = None if near is None else promotion_estimate(
            so_far, near, self.n_total, rc.promotion_z, run_var
        )  # fmt: skip
        _record_drop(ctx, trial, est, stage, self.sizes, baseline,
                     (stop.reason, MIN_DROP_MARGIN), self.n_errors, point, stop)  # fmt: skip
        raise optuna.TrialPruned(stop.reason)

    def outcome(self) -> dict[str, Any]:
        """The completed config's scores on the full set, recorded as racing's last stage."""
        raw = pd.concat(self.parts)
        in_order = fill_unmeasured(raw)
        full = raw.sort_index()  # the search set's own row order: same sums as full
        scores = {name: float(full[name].mean()) for name in full.columns}
        merged = RepeatScores(
            long=pd.concat([s.long for s in self.stages]),
            per_case=full,
            pass_k=pd.concat([s.pass_k for s in self.stages]),
            repeats=self.stages[0].repeats,
        )
        check_scores(scores)
        sizes, n_total = self.sizes, self.n_total
        self.trial.set_user_attr(
            "racing",
            {"stage": len(sizes), "n_stages": len(sizes), "stage_sizes": sizes,
             "case_evaluations": n_total, "dropped": None},
        )  # fmt: skip
        raced = tuple(c for c in MAY_BE_UNSCORED if c in raw and raw[c].isna().any())
        keep_reference(self.trial, in_order, sizes, self.key, raced)
        return {
            "scores": scores,
            "n_case_errors": self.n_errors,
            "error_rate": merged.error_rate,
            "harness_s": self.harness_s,
            "repeats": merged.summary(),
        }


def fill_unmeasured(per_case: pd.DataFrame) -> pd.DataFrame:
    """Errored cases have no latency or cost (NaN); racing's bounds and references need a
    number, so they get the mean of the answered cases: every mean stays the answered mean.
    A case a floor metric does not score (policy, no rule for its intent) is raced as passing
    it: that only raises the mean, so a floor's upper bound stays an upper bound on the mean
    over scored cases and a drop for a floor stays proof (references keep their means as
    raced: `keep_reference`). The trial's recorded score is the mean over scored cases."""
    cols = [c for c in UNMEASURED if c in per_case.columns and per_case[c].isna().any()]
    unscored = [c for c in MAY_BE_UNSCORED if c in per_case.columns and per_case[c].isna().any()]
    if not cols and not unscored:
        return per_case
    out = per_case.copy()
    for c in cols:
        out[c] = out[c].fillna(out[c].mean())
    for c in unscored:
        out[c] = out[c].fillna(1.0)
    return out


def _scored_so_far(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The per-case scores run so far; a NaN score is a harness failure, never evidence
    (an errored case's missing latency and cost excepted: `fill_unmeasured`)."""
    so_far = fill_unmeasured(pd.concat(parts))
    if so_far.isna().any().any():
        raise ScoringFailure(f"evaluation produced NaN scores {so_far.mean().to_dict()}")
    return so_far


def _record_drop(
    ctx: RunContext,
    trial: optuna.Trial,
    est: Estimate,
    stage: int,
    sizes: list[int],
    baseline: Mapping[str, float],
    verdict: tuple[str, float],
    n_errors: int,
    point: Mapping[str, float] | None = None,
    stop: NotPromoted | None = None,
) -> None:
    """Stage, bounds and why on the trial. `estimates` are the prefix's own means; a trial
    not promoted (`stop`) also keeps `point_estimate`, the paired means its promotion was
    judged on, and `under_bar`, whether only the promotion bar stopped it."""
    reason, margin = verdict
    trial.set_user_attr(
        "racing",
        {
            "stage": stage,
            "n_stages": len(sizes),
            "stage_sizes": sizes,
            "case_evaluations": est.n,
            "dropped": reason,
            "not_promoted": stop is not None,
            UNDER_BAR_ATTR: stop is not None and stop.under_bar,
            "n_case_errors": n_errors,
            "estimates": {k: round(v, 9) for k, v in est.mean.items()},
            "bounds": {k: [round(est.low[k], 9), round(est.high[k], 9)] for k in est.mean},
            **({"point_estimate": {k: round(v, 9) for k, v in point.items()}} if point else {}),
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
