"""Calibrate the attributor on a few annotated runs of your own system, the bundled weights as
the prior.

The model is a conditional logit: within a run, the annotated step's probability is the softmax
of its candidates' scores. Calibration maximises that likelihood over the labelled runs plus a
Gaussian prior centred on the prior weights (divided by their temperature, so the prior is
already a calibrated model): `PRIOR_STRENGTH / 2 * |w - w0|^2`. With no runs the result is the
prior; each run moves the weights only as far as its evidence outweighs the prior, so 5-20 runs
adjust the features that fire on their annotated steps and leave the rest where they were.
scipy's L-BFGS does the optimising; the objective and its gradient are the few lines below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.linear import LinearAttributor, run_rows
from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.turns import RunTrace

#: Inverse variance of the Gaussian prior on each weight (a weight's prior sd is ~0.7 logit):
#: stated before any run was scored, not chosen on data (see docs/failure_attribution.md).
PRIOR_STRENGTH = 2.0

Part = tuple[np.ndarray, np.ndarray, list[int]]


@dataclass(frozen=True)
class Calibration:
    weights: dict[str, float]
    temperature: float
    #: Labelled runs given, and those whose annotated step is a candidate (the ones that count).
    runs: int
    used_runs: int


def _vector(weights: Mapping[str, float], temperature: float) -> np.ndarray:
    return np.array([weights.get(f, 0.0) for f in STEP_FEATURES]) / max(temperature, 1e-9)


def calibrate_parts(
    parts: Sequence[Part],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float = PRIOR_STRENGTH,
) -> Calibration:
    """MAP weights of the conditional logit over `parts` (see `linear.run_rows`)."""
    w0 = _vector(prior, prior_temperature)
    usable = [(x, int(np.argmax(y))) for x, y, _ in parts if len(y) and y.any()]
    if not usable:
        return Calibration(dict(zip(STEP_FEATURES, w0.tolist(), strict=True)), 1.0, len(parts), 0)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        diff = w - w0
        value = 0.5 * strength * float(diff @ diff)
        grad = strength * diff
        for x, a in usable:
            z = x @ w
            value -= float(log_softmax(z)[a])
            grad += x.T @ softmax(z) - x[a]
        return value, grad

    found = minimize(objective, w0, jac=True, method="L-BFGS-B")
    weights = dict(zip(STEP_FEATURES, (float(v) for v in found.x), strict=True))
    return Calibration(weights, 1.0, len(parts), len(usable))


def calibrate(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float = PRIOR_STRENGTH,
) -> Calibration:
    """Calibrated weights from annotated runs (`steps[i]`: run i's annotated step)."""
    parts = [run_rows(r, s) for r, s in zip(runs, steps, strict=True)]
    return calibrate_parts(parts, prior, prior_temperature, strength)


def leave_one_out(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float = PRIOR_STRENGTH,
) -> list[Attribution | None]:
    """Each run attributed by the calibration fitted on the other runs only."""
    parts = [run_rows(r, s) for r, s in zip(runs, steps, strict=True)]
    out: list[Attribution | None] = []
    for i, run in enumerate(runs):
        fit = calibrate_parts(parts[:i] + parts[i + 1 :], prior, prior_temperature, strength)
        model = LinearAttributor(fit.weights, "calibrated (leave-one-out)", fit.temperature)
        out.append(model.attribute(run))
    return out


__all__ = ["PRIOR_STRENGTH", "Calibration", "calibrate", "calibrate_parts", "leave_one_out"]
