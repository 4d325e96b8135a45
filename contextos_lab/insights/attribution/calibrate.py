"""Calibrate the attributor on a few annotated runs of your own system, the bundled weights as
the prior.

The model is a conditional logit: within a run, the annotated step's probability is the softmax
of its candidates' scores. A calibrated score is `scale * prior score + x . d + e . v`: `scale`
is the system's own sharpness of the prior (one number, so the probabilities can fit a new
system without touching the ranking), `d` moves the generic weights and `v` weighs the
per-system features (which of *this* system's speakers, tools and places tend to be decisive,
`system_features`); both are shrunk toward 0 by a Gaussian prior `strength / 2 * |d, v|^2`.

How far the runs may move the ranking is chosen by leave-one-out on the labelled runs
themselves, by top-1 agreement (what the ranking is for), among STRENGTHS and KEEP_RANKING (the
prior's ranking, only its scale fitted); ties go to the stronger prior. So a calibration moves
the prior's ranking only when, fitted without each labelled run, it finds more of their
annotated steps than the prior does: 5-20 runs that show something new help, and runs that show
nothing (or contradict each other) leave the prior's ranking as it was. scipy's L-BFGS does the
optimising; the objective and its gradient are the few lines below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import ThreadpoolController

from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.linear import LinearAttributor, run_rows, run_system_rows
from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.turns import RunTrace

#: Inverse variance of the Gaussian prior on each weight's move (a move's prior sd is ~0.7
#: logit): stated before any run was scored; used when a strength is given but not chosen.
PRIOR_STRENGTH = 2.0
#: The strengths `choose_strength` picks from by leave-one-out on the labelled runs themselves
#: (weak to strong; one fixed strength either wrecks the prior on 5 runs or ignores 20).
STRENGTHS = (0.3, 1.0, 3.0, 10.0, 30.0)
#: The strongest choice: the prior's ranking kept, only its scale fitted.
KEEP_RANKING = math.inf
#: Labelled runs up to which `calibrate`'s printed check holds out one run at a time; beyond,
#: CHECK_FOLDS folds (see `check_folds`).
LEAVE_ONE_OUT_RUNS = 20
CHECK_FOLDS = 10
#: Inverse variance of the scale around 1 (weak: a new system may be much sharper or flatter).
SCALE_STRENGTH = 0.1

Part = tuple[np.ndarray, np.ndarray, list[int]]
SystemRows = list[dict[str, float]]


@dataclass(frozen=True)
class Calibration:
    #: Generic weights (every STEP_FEATURES name) and the per-system ones the fit gave weight.
    weights: dict[str, float]
    temperature: float
    #: Labelled runs given, and those whose annotated step is a candidate (the ones that count).
    runs: int
    used_runs: int
    scale: float = 1.0


@cache
def _blas() -> ThreadpoolController:
    """Found once: finding the loaded BLAS libraries costs ~10 ms, more than a fit."""
    return ThreadpoolController()


def _vector(weights: Mapping[str, float], temperature: float) -> np.ndarray:
    return np.array([weights.get(f, 0.0) for f in STEP_FEATURES]) / max(temperature, 1e-9)


def _system_matrix(rows: SystemRows, vocab: Sequence[str]) -> np.ndarray:
    at = {name: j for j, name in enumerate(vocab)}
    e = np.zeros((len(rows), len(vocab)))
    for r, row in enumerate(rows):
        for name, value in row.items():
            if name in at:
                e[r, at[name]] = value
    return e


def calibrate_parts(
    parts: Sequence[Part],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float = PRIOR_STRENGTH,
    system: Sequence[SystemRows] | None = None,
) -> Calibration:
    """MAP calibration over `parts` (see `linear.run_rows`) and their per-system rows
    (`linear.run_system_rows`; None: none); `strength` KEEP_RANKING fits the scale only."""
    w0 = _vector(prior, prior_temperature)
    rows = system if system is not None else [[{} for _ in y] for _, y, _ in parts]
    usable = [
        (x, e, int(np.argmax(y)))
        for (x, y, _), e in zip(parts, rows, strict=True)
        if len(y) and y.any()
    ]
    if not usable:
        return Calibration(dict(zip(STEP_FEATURES, w0.tolist(), strict=True)), 1.0, len(parts), 0)
    movable = math.isfinite(strength)
    vocab = sorted({name for _, e, _ in usable for row in e for name in row}) if movable else []
    f, v = len(STEP_FEATURES), len(vocab)

    # All runs' candidates in one matrix: the per-run softmax is a segment sum over `starts`,
    # so one evaluation is a few array operations (leave-one-out choices call this often).
    x_all = np.vstack([x for x, _, _ in usable])
    e_all = np.vstack([_system_matrix(e, vocab) for _, e, _ in usable])
    base = x_all @ w0
    sizes = np.array([len(x) for x, _, _ in usable])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    chosen_rows = starts + np.array([a for _, _, a in usable])
    run_of = np.repeat(np.arange(len(usable)), sizes)

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        scale, move = p[0], p[1:]
        d, sv = (move[:f], move[f:]) if movable else (np.zeros(f), np.zeros(0))
        z = scale * base + x_all @ d + e_all @ sv
        top = np.maximum.reduceat(z, starts)
        ez = np.exp(z - top[run_of])
        total = np.add.reduceat(ez, starts)
        g = ez / total[run_of]  # d(-log-likelihood)/dz, after the chosen rows' -1 below
        g[chosen_rows] -= 1.0
        nll = float((top + np.log(total)).sum() - z[chosen_rows].sum())
        penalty = 0.5 * SCALE_STRENGTH * (scale - 1.0) ** 2
        grad = [[float(g @ base) + SCALE_STRENGTH * (scale - 1.0)]]
        if movable:
            penalty += 0.5 * strength * float(move @ move)
            grad += [x_all.T @ g + strength * d, e_all.T @ g + strength * sv]
        return nll + penalty, np.concatenate(grad)

    start = np.concatenate([[1.0], np.zeros(f + v if movable else 0)])
    bounds = [(1e-3, None)] + [(None, None)] * (len(start) - 1)
    with _blas().limit(limits=1):  # a ~50-weight problem: BLAS threads cost more than they save
        found = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds)
    scale = float(found.x[0])
    moves = found.x[1:] if movable else np.zeros(f)
    weights = {
        name: float(scale * w + m) for name, w, m in zip(STEP_FEATURES, w0, moves[:f], strict=True)
    }
    weights |= {name: float(m) for name, m in zip(vocab, moves[f:], strict=True) if abs(m) > 1e-4}
    return Calibration(weights, 1.0, len(parts), len(usable), scale)


def _hit(fit: Calibration, x: np.ndarray, y: np.ndarray, rows: SystemRows) -> int:
    generic = x @ np.array([fit.weights[f] for f in STEP_FEATURES])
    own = np.array([sum(fit.weights.get(k, 0.0) * v for k, v in row.items()) for row in rows])
    return int(y[int(np.argmax(generic + own))])


def choose_strength(
    parts: Sequence[Part],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    system: Sequence[SystemRows] | None = None,
) -> float:
    """The strength of STRENGTHS + (KEEP_RANKING,) whose calibration, fitted without each
    labelled run of `parts`, finds the most of their annotated steps (ties: the stronger, so
    the prior's ranking moves only when it finds strictly more). Fewer than two usable runs:
    KEEP_RANKING (one run can only be checked against the prior)."""
    rows = list(system) if system is not None else [[{} for _ in y] for _, y, _ in parts]
    usable = [(p, r) for p, r in zip(parts, rows, strict=True) if len(p[1]) and p[1].any()]
    if len(usable) < 2:
        return KEEP_RANKING
    hits: dict[float, int] = {}
    for strength in (*STRENGTHS, KEEP_RANKING):
        total = 0
        for i, ((x, y, _), r) in enumerate(usable):
            rest = usable[:i] + usable[i + 1 :]
            fit = calibrate_parts(
                [p for p, _ in rest], prior, prior_temperature, strength, [q for _, q in rest]
            )
            total += _hit(fit, x, y, r)
        hits[strength] = total
    best = max(hits.values())
    return max(s for s in hits if hits[s] == best)


def calibrate_chosen(
    parts: Sequence[Part],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    system: Sequence[SystemRows] | None = None,
) -> tuple[Calibration, float]:
    """`calibrate_parts` at the strength `choose_strength` picks on the same runs."""
    strength = choose_strength(parts, prior, prior_temperature, system)
    return calibrate_parts(parts, prior, prior_temperature, strength, system), strength


def _labelled(
    runs: Sequence[RunTrace], steps: Sequence[int]
) -> tuple[list[Part], list[SystemRows]]:
    pairs = list(zip(runs, steps, strict=True))
    return [run_rows(r, s) for r, s in pairs], [run_system_rows(r) for r, _ in pairs]


def calibrate(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float | None = None,
) -> Calibration:
    """Calibrated weights from annotated runs (`steps[i]`: run i's annotated step); without
    `strength`, how far they may move the prior is chosen by leave-one-out on these runs."""
    parts, system = _labelled(runs, steps)
    if strength is None:
        return calibrate_chosen(parts, prior, prior_temperature, system)[0]
    return calibrate_parts(parts, prior, prior_temperature, strength, system)


def check_folds(n_runs: int) -> int | None:
    """How many parts `leave_one_out` holds out for the check `calibrate` prints: one per run
    (None) up to LEAVE_ONE_OUT_RUNS, the range the procedure is meant for; CHECK_FOLDS beyond,
    since each part refits the whole calibration (its own leave-one-out included)."""
    return None if n_runs <= LEAVE_ONE_OUT_RUNS else CHECK_FOLDS


def leave_one_out(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    prior: Mapping[str, float],
    prior_temperature: float = 1.0,
    strength: float | None = None,
    folds: int | None = None,
) -> list[Attribution | None]:
    """Each run attributed by the calibration fitted on the other runs only (without
    `strength`, its strength too is chosen on the other runs only); with `folds`, on the runs
    outside its fold (run i is in fold i % folds), one calibration per fold."""
    parts, system = _labelled(runs, steps)
    k = folds or len(runs)
    out: list[Attribution | None] = [None] * len(runs)
    for fold in range(min(k, len(runs))):
        held = [i for i in range(len(runs)) if i % k == fold]
        rest = [parts[i] for i in range(len(runs)) if i % k != fold]
        own = [system[i] for i in range(len(runs)) if i % k != fold]
        fit = (
            calibrate_chosen(rest, prior, prior_temperature, own)[0]
            if strength is None
            else calibrate_parts(rest, prior, prior_temperature, strength, own)
        )
        model = LinearAttributor(fit.weights, "calibrated (held out)", fit.temperature)
        for i in held:
            out[i] = model.attribute(runs[i])
    return out


__all__ = [
    "CHECK_FOLDS",
    "KEEP_RANKING",
    "LEAVE_ONE_OUT_RUNS",
    "PRIOR_STRENGTH",
    "SCALE_STRENGTH",
    "STRENGTHS",
    "Calibration",
    "calibrate",
    "calibrate_chosen",
    "calibrate_parts",
    "check_folds",
    "choose_strength",
    "leave_one_out",
]
