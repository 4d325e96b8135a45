"""Which pooled config the target runs next under the surrogate steer: the one whose optimistic
prediction adds most to the target's current front (docs/tiers.md, "The surrogate").

Trust is measured twice. Picks start once a few configs ran on both tiers, fitted on the screen
and the config. Once the screen's agreement is measured below `min_agreement` the screen is off
(`autotune.tiers.screen`, `stance`): nothing more is screened and the surrogate goes on with the
config alone, among pooled and freshly drawn configs. Each pick records its prediction, and once
those predictions are measured not to rank what the target then scored (`surrogate_skill`), the
picks stop and the study is racing on the target alone. Audit trials are always the sampler's,
so the surrogate keeps learning on configs it did not choose. With tiers that do not agree the
screen columns carry nothing and the surrogate picks by what the pairs taught it about the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.pareto import normalised_losses
from contextos_lab.autotune.sampling.local_search import feasible_front
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.tiers.agreement import (
    Agreement,
    measure,
    study_agreement,
    target_scores,
)
from contextos_lab.autotune.tiers.pool import (
    PICK_ATTR,
    draw,
    key,
    pooled,
    ran_on_target,
    training_pairs,
)
from contextos_lab.autotune.tiers.screen import stance
from contextos_lab.autotune.tiers.surrogate import Surrogate, best_pick

#: Configs on both tiers before the surrogate picks: as few as anything can be ranked on. With so
#: few pairs Bayesian ridge shrinks hard and its spread is wide, so early picks explore.
MIN_PAIRS = 4


def candidates(
    ctx: RunContext, study: optuna.Study, use: str
) -> list[tuple[dict[str, Any], dict[str, float]]]:
    """Pooled configs (one each) the target has not run and is not about to; once the screen
    is off (`use` "config") also `tiers.pool` configs drawn afresh, which need no screening."""
    tiers = ctx.spec.tiers
    assert tiers is not None
    done = ran_on_target(study)
    out: dict[Any, tuple[dict[str, Any], dict[str, float]]] = {}
    for params, scores in pooled(study):
        if key(params) not in done:
            out.setdefault(key(params), (params, scores))
    if use == "config":
        seed = (ctx.spec.sampler.seed or 0) * 100_003 + len(study.trials)
        for params in draw(ctx.space, tiers.pool, done | set(out), seed):
            out[key(params)] = (params, {})
    return list(out.values())


def surrogate_skill(study: optuna.Study, spec: TuningRunSpec, level: float) -> Agreement:
    """How well the surrogate's picks were predicted: per objective, the rank correlation of
    each pick's predicted loss with the loss the target then measured (`measure`'s interval)."""
    objectives = [e.value for e in spec.objectives]
    predicted, measured = [], []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
        pick = t.user_attrs.get(PICK_ATTR)
        target = target_scores(t, objectives)
        if isinstance(pick, dict) and target is not None:
            predicted.append(pick["predicted"])
            measured.append(target)
    k = len(objectives)
    got = normalised_losses(np.array(measured, dtype=float).reshape(-1, k), spec)
    return measure(np.array(predicted, dtype=float).reshape(-1, k), got, objectives, level)


def steering(
    ctx: RunContext, study: optuna.Study, baseline: Mapping[str, float] | None
) -> str | None:
    """What the next pick is fitted on: "screen" (the screen and the config), "config" (the
    screen is off: the config alone), or None (the sampler proposes). None for an audit, while
    a trial waits, before the baseline ran, and once the surrogate's own picks are measured to
    be predicted worse than `min_agreement`: then the study is racing on the target alone."""
    tiers = ctx.spec.tiers
    if tiers is None or tiers.steer != "surrogate" or ctx.screen is None or baseline is None:
        return None
    trials = study.get_trials(deepcopy=False)
    if len(trials) % tiers.audit_every == 0 or any(t.state == TrialState.WAITING for t in trials):
        return None
    skill = surrogate_skill(study, ctx.spec, tiers.level)
    if skill.n >= tiers.min_pairs and skill.high is not None and skill.high < tiers.min_agreement:
        return None
    objectives = [e.value for e in ctx.spec.objectives]
    off = stance(study_agreement(study, objectives, tiers.level), tiers)[0] == "off"
    return "config" if off else "screen"


def screen_losses(rows: list[list[float]], spec: TuningRunSpec, use: str) -> np.ndarray:
    """The screen columns: normalised screen losses, or none once the screen is off."""
    k = len(spec.objectives)
    if use != "screen":
        return np.zeros((len(rows), 0))
    return normalised_losses(np.array(rows, dtype=float).reshape(-1, k), spec)


def enqueue_pick(
    ctx: RunContext, study: optuna.Study, baseline: Mapping[str, float] | None
) -> dict[str, Any] | None:
    """Enqueue the surrogate's pick for the next trial (and return its record); None: the
    sampler proposes the next trial."""
    use = steering(ctx, study, baseline)
    if use is None:
        return None
    tiers, spec = ctx.spec.tiers, ctx.spec
    assert tiers is not None
    objectives = [e.value for e in spec.objectives]
    pool = candidates(ctx, study, use)
    params, screen, target = training_pairs(study, objectives, with_screen=use == "screen")
    if not pool or len(params) < MIN_PAIRS:
        return None
    model = Surrogate.fit(ctx.space, params, screen_losses(screen, spec, use),
                          normalised_losses(np.array(target), spec))  # fmt: skip
    rows = [[s.get(o, np.nan) for o in objectives] for _, s in pool]
    mean, spread = model.predict([p for p, _ in pool], screen_losses(rows, spec, use))
    front = feasible_front(study, study.get_trials(deepcopy=False))
    values = np.array([t.values for t in front], dtype=float).reshape(-1, len(objectives))
    got = best_pick(normalised_losses(values, spec), mean, spread, tiers.optimism)
    if got is None:
        return None
    row, gain = got
    record = {
        "screen": pool[row][1],
        "why": f"surrogate pick ({use}): adds {gain:.4f} to the target front's hypervolume "
        f"(optimistic prediction, {len(params)} configs to learn from, {len(pool)} candidates)",
        "predicted": [round(float(v), 6) for v in mean[row]],
        "spread": [round(float(v), 6) for v in spread[row]],
    }
    study.enqueue_trial(pool[row][0], user_attrs={PICK_ATTR: record})
    return record
