"""The screen step of a tiered trial: run the config on the cheap tier, then decide whether the
target tier pays for it, trusting the screen only as far as the measured agreement earns.

Stances, from the agreement on configs run on both tiers (`autotune.tiers.agreement`):

  * learning: fewer than `min_pairs` pairs, or the interval still straddles 0: the screen runs,
    every config goes on to the target (each is a new pair);
  * off: the interval's upper bound is below `min_agreement`: the screen is not run any more
    and the study is racing on the target tier alone; its penalty is what learning cost;
  * trusted: the lower bound is above 0: a config goes on unless a member of the target's
    current front leads it on the screen, on every objective, by more than that objective's
    doubt (`autotune.tiers.steer`); every `audit_every`-th trial goes on regardless, so the
    agreement is still measured on configs the screen did not pick.

Under the surrogate steer (the default, `autotune.tiers.pick`) most trials are the surrogate's
picks, enqueued with the screen scores the pool measured: they are not screened again and always
go on; the first trial that screens also screens the pool (`autotune.tiers.pool`).

The baseline and outside proposals always go on (the gate needs the first; the second are only
dropped when proved infeasible). A config the screen stops ends PRUNED with `racing` stage 0 and
no target case evaluations; its constraints are the screen's floors plus `racing_drop`, so the
sampler learns it was not worth paying for, and no screen score is ever told as a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import optuna

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.objective import constraint_values
from contextos_lab.autotune.racing.racing import MIN_DROP_MARGIN
from contextos_lab.autotune.sampling.local_search import feasible_front
from contextos_lab.autotune.spec.tiers import Tiers
from contextos_lab.autotune.tiers.agreement import TIERS_ATTR, Agreement, study_agreement
from contextos_lab.autotune.tiers.evaluate import screen_config
from contextos_lab.autotune.tiers.pool import PICK_ATTR, screen_pool
from contextos_lab.autotune.tiers.steer import beaten_by, lows_text, per_objective_lows
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName


def stance(agreement: Agreement, tiers: Tiers) -> tuple[str, str]:
    """("learning" | "off" | "trusted", why) for the agreement measured so far."""
    a = agreement
    if a.n < tiers.min_pairs or a.low is None or a.high is None:
        return "learning", f"{a.n} of {tiers.min_pairs} configs on both tiers"
    where = (
        f"rank correlation {a.rho:.3f} [{a.low:.3f}, {a.high:.3f}] on {a.objective}, {a.n} configs"
    )
    if a.high < tiers.min_agreement:
        return "off", f"{where}: below {tiers.min_agreement}, the screen is not run"
    if a.low <= 0:
        return "learning", f"{where}: not yet above 0"
    return "trusted", where


def losses(rows: np.ndarray, objectives: list[str]) -> np.ndarray:
    """Scores turned into losses (smaller better) per objective."""
    maximize = [DIRECTIONS[EvaluatorName(o)] == "maximize" for o in objectives]
    sign = np.where(maximize, -1.0, 1.0)
    return rows * sign


def screened_rows(
    study: optuna.Study, objectives: list[str], skip: int
) -> tuple[list[list[float]], list[int], list[int]]:
    """Screen scores of every other trial that ran the screen (finished or running), the rows
    of those on the target's current feasible front, and those trials' numbers."""
    trials = study.get_trials(deepcopy=False)
    front = {t.number for t in feasible_front(study, trials)}
    out: list[list[float]] = []
    on_front: list[int] = []
    numbers: list[int] = []
    for t in trials:
        screen = (t.user_attrs.get(TIERS_ATTR) or {}).get("screen")
        if t.number != skip and isinstance(screen, dict) and isinstance(screen.get("scores"), dict):
            if t.number in front:
                on_front.append(len(out))
                numbers.append(t.number)
            out.append([float(screen["scores"][o]) for o in objectives])
    return out, on_front, numbers


def decide(
    ctx: RunContext,
    trial: optuna.Trial,
    scores: Mapping[str, float],
    mode: str,
    agreement: Agreement,
    baseline: Mapping[str, float] | None,
) -> tuple[bool, str]:
    """(goes on to the target, why)."""
    tiers = ctx.spec.tiers
    assert tiers is not None
    if baseline is None:
        return True, "the baseline runs on both tiers"
    if "proposer" in trial.user_attrs:
        return True, "an outside proposal is only dropped when proved infeasible"
    if mode != "trusted" or agreement.low is None:
        return True, "learning the agreement"
    if trial.number % tiers.audit_every == 0:
        return True, f"audit (every {tiers.audit_every}th trial goes on whatever the screen says)"
    objectives = [e.value for e in ctx.spec.objectives]
    others, front, numbers = screened_rows(trial.study, objectives, trial.number)
    front_numbers = dict(zip(front, numbers, strict=True))
    mine = [float(scores[o]) for o in objectives]
    rows = losses(np.array([*others, mine]), objectives)
    lows = per_objective_lows(agreement.per_objective, objectives)
    by = beaten_by(rows, len(others), front, lows)
    if by is None:
        return True, f"no target front member leads it on the screen by {lows_text(lows)}"
    number = front_numbers[by]
    return False, f"target front member #{number} leads it on the screen by {lows_text(lows)}"


def screen_step(
    ctx: RunContext,
    trial: optuna.Trial,
    params: Mapping[str, Any],
    baseline: Mapping[str, float] | None,
) -> None:
    """Record the screen's verdict on the trial; raise `optuna.TrialPruned` when the target
    tier is not to pay for this config. No-op for a spec without tiers."""
    tiers, screen = ctx.spec.tiers, ctx.screen
    if tiers is None or screen is None:
        return
    objectives = [e.value for e in ctx.spec.objectives]
    agreement = study_agreement(trial.study, objectives, tiers.level)
    mode, why = stance(agreement, tiers)
    record: dict[str, Any] = {"agreement": agreement.as_dict(), "stance": mode, "stance_why": why}
    if mode == "off":
        trial.set_user_attr(TIERS_ATTR, {**record, "screen": None, "decided_by": "target"})
        return
    pick = trial.user_attrs.get(PICK_ATTR)
    if isinstance(pick, dict):  # a surrogate pick: screened already, in the pool
        record["screen"] = {"scores": pick["screen"], "cases": 0, "calls": 0, "usd": 0.0,
                            "n_case_errors": 0, "from_pool": True}  # fmt: skip
        trial.set_user_attr(TIERS_ATTR, {**record, "decided_by": "target", "why": pick["why"]})
        return
    record["screen"] = screen_config(ctx, params)
    scores = record["screen"]["scores"]
    if tiers.steer == "surrogate" and baseline is not None:
        record["pool"] = screen_pool(ctx, trial)
    goes_on, reason = decide(ctx, trial, scores, mode, agreement, baseline)
    record.update(decided_by="target" if goes_on else "screen", why=reason)
    if goes_on:
        trial.set_user_attr(TIERS_ATTR, record)
        return
    errors = record["screen"]["n_case_errors"]
    racing = {"stage": 0, "n_stages": 0, "case_evaluations": 0, "dropped": f"screen: {reason}",
              "not_promoted": False, "n_case_errors": errors}  # fmt: skip
    trial.set_user_attr(TIERS_ATTR, record)
    trial.set_user_attr("racing", racing)
    for name, value in constraint_values(ctx, scores, None).items():
        trial.set_constraint(name, value)
    trial.set_constraint("racing_drop", MIN_DROP_MARGIN)
    raise optuna.TrialPruned(f"screen: {reason}")


def tier_of(trial: optuna.trial.FrozenTrial) -> str | None:
    """Which tier decided a tiered trial's fate ("screen" or "target"); None: untiered."""
    got = trial.user_attrs.get(TIERS_ATTR)
    return got.get("decided_by") if isinstance(got, dict) else None
