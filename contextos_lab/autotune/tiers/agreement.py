"""How well the screen tier ranks configs as the target tier does, measured as the study runs.

Per objective: Spearman's rank correlation between the two tiers' scores on the configs run on
both (the target's full-set means for a completed trial, its racing estimates for a dropped
one), with a Fisher-z interval (scipy's `pearsonr(...).confidence_interval` on the ranks, which
is Spearman's coefficient). Closed form rather than a bootstrap: it is recomputed before every
trial, where a 1,000-resample bootstrap per objective would cost more than the sampler.
The agreement the study acts on is the objective whose lower bound is smallest: a screen that
ranks cost well but accuracy not at all has earned nothing on accuracy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

#: The user attribute a tiered trial records (autotune.tiers.screen).
TIERS_ATTR = "tiers"


@dataclass(frozen=True)
class Agreement:
    """Rank correlation (`rho`, interval `low`..`high`) on `n` configs, for `objective`."""

    n: int
    objective: str | None
    rho: float | None
    low: float | None
    high: float | None
    level: float
    per_objective: dict[str, list[float | None]]

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for k in ("rho", "low", "high"):
            out[k] = None if out[k] is None else round(out[k], 4)
        return out


def target_scores(trial: optuna.trial.FrozenTrial, objectives: list[str]) -> list[float] | None:
    """What the target tier measured for a finished trial: its values, or its racing estimates
    when racing dropped it; None when the target never ran it."""
    if trial.state == TrialState.COMPLETE and trial.values is not None:
        return [float(v) for v in trial.values]
    racing = trial.user_attrs.get("racing") or {}
    est = racing.get("estimates")
    raced = trial.state == TrialState.PRUNED and racing.get("stage", 0) > 0
    if raced and isinstance(est, dict) and all(o in est for o in objectives):
        return [float(est[o]) for o in objectives]
    return None


def pairs(study: optuna.Study, objectives: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(screen, target) score rows of every finished trial run on both tiers."""
    screen_rows, target_rows = [], []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
        screen = (t.user_attrs.get(TIERS_ATTR) or {}).get("screen")
        if not isinstance(screen, dict) or not isinstance(screen.get("scores"), dict):
            continue
        target = target_scores(t, objectives)
        if target is None:
            continue
        screen_rows.append([float(screen["scores"][o]) for o in objectives])
        target_rows.append(target)
    k = len(objectives)
    return (
        np.array(screen_rows, dtype=float).reshape(-1, k),
        np.array(target_rows, dtype=float).reshape(-1, k),
    )


def rank_correlation(
    x: np.ndarray, y: np.ndarray, level: float
) -> tuple[float, float, float] | None:
    """(rho, low, high) of Spearman's rho with its Fisher-z interval; None when a tier is
    constant on these configs or fewer than 4 (nothing to rank)."""
    from scipy import stats

    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    result = stats.pearsonr(stats.rankdata(x), stats.rankdata(y))
    ci = result.confidence_interval(confidence_level=level)
    return float(result.statistic), float(ci.low), float(ci.high)


def measure(
    screen: np.ndarray, target: np.ndarray, objectives: list[str], level: float
) -> Agreement:
    """The agreement on the objective with the smallest lower bound (a tier constant on an
    objective, on both, says nothing about it and is left out)."""
    per: dict[str, list[float | None]] = {}
    worst: tuple[str, tuple[float, float, float]] | None = None
    for j, name in enumerate(objectives):
        got = rank_correlation(screen[:, j], target[:, j], level) if len(screen) else None
        per[name] = [None, None, None] if got is None else [round(v, 4) for v in got]
        if got is not None and (worst is None or got[1] < worst[1][1]):
            worst = (name, got)
    if worst is None:
        return Agreement(len(screen), None, None, None, None, level, per)
    name, (rho, low, high) = worst
    return Agreement(len(screen), name, rho, low, high, level, per)


def study_agreement(study: optuna.Study, objectives: list[str], level: float) -> Agreement:
    screen, target = pairs(study, objectives)
    return measure(screen, target, objectives, level)
