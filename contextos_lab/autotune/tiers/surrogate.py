"""A surrogate of the target tier learned from configs run on both tiers: the screen's scores
plus a correction fitted on the study's declared search space (docs/tiers.md, "The surrogate").

Per objective, the target's normalised loss is regressed on the screen's normalised losses (every
objective: a screen that measures cost well says something about latency too) and on the config
itself (one column per value of a categorical or boolean surface; a numeric surface scaled to
[0, 1] with its square). So where the tiers agree the screen column carries the prediction, and
where they part (a knob whose best value flips between them, a knob that matters on one tier
only) the config columns learn the correction from the pairs, not from any assumption about the
two harnesses. Bayesian ridge (scikit-learn's `BayesianRidge`) rather than a GP: it fits the
shrinkage from the data in closed form, gives a predictive spread, and stays stable on the ten
or twenty pairs a study has when it starts steering. Nothing here knows a knob's name or how
far two particular tiers agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contextos_lab.autotune.pareto import hypervolume
from contextos_lab.autotune.spec.search_space import SearchSpace


def config_columns(space: SearchSpace, params: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The config part of the features: one-hot per categorical/boolean value, a numeric
    surface as (x, x^2) with x its place between the surface's low and high."""
    cols: list[np.ndarray] = []
    for s in space.surfaces:
        values = [p.get(s.name, s.baseline) for p in params]
        if s.kind in ("bool", "categorical"):
            grid = s.grid()
            cols.append(np.array([[v == g for g in grid] for v in values], dtype=float))
            continue
        low, high = float(s.low or 0.0), float(s.high or 0.0)
        x = (np.array(values, dtype=float) - low) / (high - low or 1.0)
        cols.append(np.column_stack([x, x * x]))
    return np.hstack(cols) if cols else np.zeros((len(params), 0))


def features(
    space: SearchSpace, params: Sequence[Mapping[str, Any]], screen: np.ndarray
) -> np.ndarray:
    """Screen losses (n x k) beside the config columns."""
    return np.hstack([np.asarray(screen, dtype=float).reshape(len(params), -1),
                      config_columns(space, params)])  # fmt: skip


@dataclass
class Surrogate:
    """One Bayesian ridge per objective; predicts the target's normalised losses."""

    space: SearchSpace
    models: list[Any]

    @classmethod
    def fit(
        cls,
        space: SearchSpace,
        params: Sequence[Mapping[str, Any]],
        screen: np.ndarray,
        target: np.ndarray,
    ) -> Surrogate:
        """Fit on pairs: `screen` and `target` are (n x k) normalised losses of `params`."""
        from sklearn.linear_model import BayesianRidge

        x = features(space, params, screen)
        models = []
        for j in range(target.shape[1]):
            models.append(BayesianRidge(fit_intercept=True).fit(x, target[:, j]))
        return cls(space, models)

    def predict(
        self, params: Sequence[Mapping[str, Any]], screen: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(mean, spread), each (n x k), of the target's normalised losses."""
        x = features(self.space, params, screen)
        got = [m.predict(x, return_std=True) for m in self.models]
        return np.column_stack([g[0] for g in got]), np.column_stack([g[1] for g in got])


def hypervolume_gains(front: np.ndarray, points: np.ndarray) -> np.ndarray:
    """How much each point (normalised losses) would add to the front's hypervolume alone."""
    base = hypervolume(front) if len(front) else 0.0
    k = points.shape[1]
    out = np.zeros(len(points))
    for i, p in enumerate(points):
        if len(front) and np.any(np.all(front <= p, axis=1)):
            continue  # dominated by the front: adds nothing (skips the hypervolume)
        out[i] = hypervolume(np.vstack([front.reshape(-1, k), p])) - base
    return out


def best_pick(
    front: np.ndarray, mean: np.ndarray, spread: np.ndarray, optimism: float
) -> tuple[int, float] | None:
    """(row, gain) of the candidate whose optimistic prediction (mean - optimism x spread)
    adds most to the target front's hypervolume; None when none adds anything."""
    if not len(mean):
        return None
    gains = hypervolume_gains(front, mean - optimism * spread)
    best = int(np.argmax(gains))
    return (best, float(gains[best])) if gains[best] > 0 else None
