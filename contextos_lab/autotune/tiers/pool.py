"""The surrogate steer (`tiers.steer: surrogate`): screen wide and cheap, then let the target
run what the surrogate expects to raise its front most (docs/tiers.md, "The surrogate").

The first trial after the baseline whose screen is not off screens `tiers.pool` configs drawn
at random from the declared search space (the whole space when it is smaller); their screen
scores are kept in that trial's `tiers` attribute, so every worker of the study sees the same
pool. Before each later trial, unless it is an audit, `autotune.tiers.pick` fits the surrogate
(`autotune.tiers.surrogate`) on the configs run on both tiers (`training_pairs`) and enqueues
the pooled config, not yet run on the target, whose optimistic prediction adds most to the
target's front. Racing still runs it on the target and only target scores are told; a pick is
never told a screen or surrogate value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.spec.search_space import SearchSpace
from contextos_lab.autotune.tiers.agreement import TIERS_ATTR, target_scores
from contextos_lab.autotune.tiers.evaluate import screen_config

#: The user attribute of an enqueued surrogate pick: its screen scores and why it was picked.
PICK_ATTR = "tiers_pick"


def key(params: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def draw(space: SearchSpace, n: int, seen: set[Any], seed: int) -> list[dict[str, Any]]:
    """Up to `n` configs not in `seen`, at random from the grid (all of it when smaller)."""
    if space.size() <= n + len(seen):
        return [p for p in space.enumerate() if key(p) not in seen][:n]
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    taken = set(seen)
    for _ in range(50 * n):
        if len(out) >= n:
            break
        p = {s.name: s.grid()[int(rng.integers(len(s.grid())))] for s in space.surfaces}
        if key(p) not in taken:
            taken.add(key(p))
            out.append(p)
    return out


def pooled(study: optuna.Study) -> list[tuple[dict[str, Any], dict[str, float]]]:
    """(params, screen scores) of every screened config: pools and trials' own screens."""
    out = []
    for t in study.get_trials(deepcopy=False):
        tiers = t.user_attrs.get(TIERS_ATTR) or {}
        for entry in (tiers.get("pool") or {}).get("configs", []):
            out.append((dict(entry["params"]), dict(entry["scores"])))
        screen = tiers.get("screen")
        if isinstance(screen, dict) and isinstance(screen.get("scores"), dict):
            out.append((dict(t.params), dict(screen["scores"])))
    return out


def screen_pool(ctx: RunContext, trial: optuna.Trial) -> dict[str, Any] | None:
    """Screen configs at random until the study's pool holds `tiers.pool` (None: it does)."""
    tiers = ctx.spec.tiers
    assert tiers is not None
    have = {key(p) for p, _ in pooled(trial.study)} | {key(trial.params)}
    want = tiers.pool - len(have)
    if want <= 0:
        return None
    seed = (ctx.spec.sampler.seed or 0) * 100_003 + trial.number
    configs, cases, calls, usd = [], 0, 0, 0.0
    for params in draw(ctx.space, want, have, seed):
        got = screen_config(ctx, params)
        configs.append({"params": params, "scores": got["scores"]})
        cases, calls, usd = cases + got["cases"], calls + got["calls"], usd + got["usd"]
    return {"configs": configs, "cases": cases, "calls": calls, "usd": round(usd, 8)}


def ran_on_target(study: optuna.Study) -> set[Any]:
    """Configs the target ran, runs or is about to run (waiting)."""
    out = set()
    for t in study.get_trials(deepcopy=False):
        racing = t.user_attrs.get("racing") or {}
        stopped = t.state == TrialState.PRUNED and racing.get("stage", 1) == 0
        if not stopped and t.state != TrialState.FAIL:
            out.add(key(t.params if t.params else t.system_attrs.get("fixed_params", {})))
    return out


def training_pairs(
    study: optuna.Study, objectives: list[str], with_screen: bool = True
) -> tuple[list[dict[str, Any]], list[list[float]], list[list[float]]]:
    """(params, screen scores, target scores) of every finished config run on both tiers; with
    `with_screen` False, of every finished config the target ran (no screen scores)."""
    params, screen_rows, target_rows = [], [], []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
        screen = (t.user_attrs.get(TIERS_ATTR) or {}).get("screen") or {}
        scores = screen.get("scores") if isinstance(screen, dict) else None
        target = target_scores(t, objectives)
        if target and (isinstance(scores, dict) or not with_screen):
            params.append(dict(t.params))
            if isinstance(scores, dict) and with_screen:
                screen_rows.append([float(scores[o]) for o in objectives])
            target_rows.append(target)
    return params, screen_rows, target_rows
