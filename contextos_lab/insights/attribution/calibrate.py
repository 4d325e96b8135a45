"""Calibrate the attributor on a few annotated runs of your own system, the bundled weights as
the prior.

The model is a conditional logit: within a run, the annotated step's probability is the softmax
of its candidates' scores. Calibration maximises that likelihood over the labelled runs plus a
Gaussian prior centred on the prior weights (divided by their temperature, so the prior is
already a calibrated model): `strength / 2 * |w - w0|^2`. With no runs the result is the
prior; each run moves the weights only as far as its evidence outweighs the prior, so 5-20 runs
adjust the features that fire on their annotated steps and leave the rest where they were. The
strength is chosen among STRENGTHS by leave-one-out on the labelled runs themselves (how far
they should move the prior is something only they can show). scipy's L-BFGS does the
optimising; the objective and its gradient are the few lines below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax
from threadpoolctl import ThreadpoolController

from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.linear import LinearAttributor, run_rows
from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.turns import RunTrace

#: Inverse variance of the Gaussian prior on each weight (a weight's prior sd is ~0.7 logit):
#: stated before any run was scored; used when a strength is given but not chosen.
PRIOR_STRENGTH = 2.0
#: The strengths `choose_strength` picks from by leave-one-out on the labelled runs themselves
#: (weak to strong; one fixed strength either wrecks the prior on 5 runs or ignores 20).
STRENGTHS = (0.3, 1.0, 3.0, 10.0, 30.0)

Part = tuple[np.ndarray, np.ndarray, list[int]]


@dataclass(frozen=True)
class Calibration:
    weights: dict[str, float]
    temperature: float
    #: Labelled runs given, and those whose annotated step is a candidate (the ones that count).
    runs: int
    used_runs: int


@cache
def _blas() -> ThreadpoolController:
    """Found once: finding the loaded BLAS libraries costs ~10 ms, more than a fit."""
    return ThreadpoolController()


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

    # All runs' candidates in one matrix: the per-run softmax is a segment sum over `starts`,
    # so one evaluation is a few array operations (leave-one-out choices call this often).
    x_all = np.vstack([x for x, _ in usable])
    sizes = np.array([len(x) for x, _ in usable])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    chosen_rows = starts + np.array([a for _, a in usable])
    x_chosen = x_all[chosen_rows].sum(axis=0)
    run_of = np.repeat(np.arange(len(usable)), sizes)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        diff = w - w0
        z = x_all @ w
        top = np.maximum.reduceat(z, starts)
        e = np.exp(z - top[run_of])
        total = np.add.reduceat(e, starts)
        log_norm = top + np.log(total)
        p = e / total[run_of]
        value = 0.5 * strength * float(diff @ diff) + float(log_norm.sum() - z[chosen_rows].sum())
        grad = strength * diff + x_all.T @ p - x_chosen
        return value, grad

    with _blas().limit(limits=1):  # a 43-weight problem: BLAS threads cost more than they save
        found = minimize(objective, w0, jac=True, method="L-BFGS-B")
    weights = dict(zip(STEP_FEATURES, (float(v) for v in found.x), strict=True))
    return Calibration(weights, 1.0, len(parts), len(usable))


def choose_strength(
    parts: Sequence[Part], prior: Mapping[str, float], prior_temperature: float = 1.0
) -> float:
    """The prior strength of STRENGTHS with the smallest leave-one-out negative
    log-likelihood of the annotated steps over the labelled runs `parts` themselves (each run
    scored by the calibration fitted on the others; ties: the stronger prior). Fewer than
    two usable runs: the strongest (the prior alone is all one run can be checked against)."""
    usable = [p for p in parts if len(p[1]) and p[1].any()]
    if len(usable) < 2:
        return STRENGTHS[-1]
    loss: dict[float, float] = {}
    for strength in STRENGTHS:
        total = 0.0
        for i, (x, y, _) in enumerate(usable):
            rest = usable[:i] + usable[i + 1 :]
            fit = calibrate_parts(rest, prior, prior_temperature, strength)
            z = x @ np.array([fit.weights[f] for f in STEP_FEATURES])
            total -= float(log_softmax(z)[int(np.argmax(y))])
        loss[strength] = total
    best = min(loss.values())
    return max(s for s in STRENGTHS if loss[s] <= best + 1e-9)


def calibrate_chosen(
    parts: Sequence[Part], prior: Mapping[str, float], prior_temperature: float = 1.0
) -> tuple[Calibration, float]:
    """`calibrate_parts` at the strength `choose_strength` picks on the same runs."""
    strength = choose_strength(parts, prior, prior_temperature)
    return calibrate_parts(parts, prior, prior_temperature, strength), strength


def calibrate(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float | None = None,
) -> Calibration:
    """Calibrated weights from annotated runs (`steps[i]`: run i's annotated step); without
    `strength`, the prior's strength is chosen by leave-one-out on these runs."""
    parts = [run_rows(r, s) for r, s in zip(runs, steps, strict=True)]
    if strength is None:
        return calibrate_chosen(parts, prior, prior_temperature)[0]
    return calibrate_parts(parts, prior, prior_temperature, strength)


def leave_one_out(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float | None = None,
) -> list[Attribution | None]:
    """Each run attributed by the calibration fitted on the other runs only (without
    `strength`, its strength too is chosen on the other runs only)."""
    parts = [run_rows(r, s) for r, s in zip(runs, steps, strict=True)]
    out: list[Attribution | None] = []
    for i, run in enumerate(runs):
        rest = parts[:i] + parts[i + 1 :]
        fit = (
            calibrate_chosen(rest, prior, prior_temperature)[0]
            if strength is None
            else calibrate_parts(rest, prior, prior_temperature, strength)
        )
        model = LinearAttributor(fit.weights, "calibrated (leave-one-out)", fit.temperature)
        out.append(model.attribute(run))
    return out


__all__ = [
    "PRIOR_STRENGTH",
    "STRENGTHS",
    "Calibration",
    "calibrate",
    "calibrate_chosen",
    "calibrate_parts",
    "choose_strength",
    "leave_one_out",
]
