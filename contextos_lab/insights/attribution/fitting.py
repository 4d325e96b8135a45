"""Fitting the linear attributor's weights on annotated runs.

Weights are fitted by logistic regression of "this is the annotated step" over candidate steps
(`fit_weights`); the penalty and its strength are chosen by an inner cross-validation over
runs, and `cross_validated` reports what that procedure scores on runs it was not fitted on
(folds over runs, so no run is in both). scikit-learn does the fitting rather than a
hand-written optimiser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.linear import LinearAttributor, run_rows
from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.ranking import fit_temperature
from contextos_lab.insights.attribution.turns import RunTrace


def training_rows(
    runs: Sequence[RunTrace], steps: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate-step feature rows, whether each is the annotated step, and the run index."""
    parts = [run_rows(run, step) for run, step in zip(runs, steps, strict=True)]
    return _stack(parts, range(len(parts)))


def _stack(
    parts: Sequence[tuple[np.ndarray, np.ndarray, list[int]]], which: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.vstack([parts[r][0] for r in which])
    y = np.concatenate([parts[r][1] for r in which])
    g = np.concatenate([np.full(len(parts[r][1]), r) for r in which])
    return x, y, g


#: Weights for features the training runs cannot inform (constant there: e.g. no orchestrator
#: ledger in AutoGen group chats). A stated prior, not a fitted value: when the orchestrator
#: itself says the run loops or stalls, the agent that acted last before that is the prime
#: suspect, so the flag outweighs any single fitted weight. Likewise a tool-using agent's first
#: state-changing call (a write decides what the run did). A non-zero prior is raised to the
#: largest fitted weight's magnitude (`_fit`), so a refit that grows the fitted weights cannot
#: silently demote it (a fixed 2.0 did, once a fit put 3.9 on another feature).
PRIOR_WEIGHTS = {
    "last_actor_before_first_flag": 2.0,
    "first_write_call": 2.0,
    "requester_ends_without_effect": 2.0,
    "role_orchestrator": 0.0,
    "role_user": 0.0,
}


#: Regularisation strengths tried by the inner cross-validation (`_select`).
C_GRID = (0.3, 1.0, 3.0, 10.0)
#: Penalties tried with each C: L1 keeps only the features that carry weight on their own (a
#: sparser, more stable score on ~100 runs), L2 shrinks them all. Both are in the inner search
#: so that the choice, too, is made on training runs only.
PENALTIES = ("l1", "l2")
#: The (penalty, C) pairs of the inner search, most regularised first (ties go to the first).
GRID = tuple((p, c) for c in C_GRID for p in PENALTIES)


def _fit(x: np.ndarray, y: np.ndarray, c: float, penalty: str = "l2") -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    if len(set(y)) < 2:
        raise ValueError("fitting needs annotated runs whose step is a candidate step")
    # liblinear solves the L1 problem (lbfgs cannot); lbfgs stays the L2 solver. scikit-learn
    # >= 1.8 names the penalty by l1_ratio (1: L1, 0: L2). liblinear shuffles the data: a fixed
    # random_state makes the fit, the cross-validated figure and --write-weights reproducible.
    l1 = penalty == "l1"
    model = LogisticRegression(
        C=c,
        l1_ratio=1.0 if l1 else 0.0,
        solver="liblinear" if l1 else "lbfgs",
        max_iter=5000,
        random_state=0,
    ).fit(x, y)
    constant = x.min(axis=0) == x.max(axis=0)
    fitted = np.abs(model.coef_[0][~constant])
    largest = float(fitted.max()) if fitted.size else 0.0
    return {
        f: _prior(f, largest) if flat else float(w)
        for f, w, flat in zip(STEP_FEATURES, model.coef_[0], constant, strict=True)
    }


def _prior(feature: str, largest: float) -> float:
    """A constant feature's PRIOR_WEIGHTS value, raised to `largest` where it is non-zero."""
    prior = PRIOR_WEIGHTS.get(feature, 0.0)
    return max(prior, largest) if prior > 0 else prior


def _hits(weights: Mapping[str, float], part: tuple[np.ndarray, np.ndarray, list[int]]) -> int:
    """1 when the best-scoring candidate (ties: earliest) is the annotated step."""
    x, y, _ = part
    if not len(y):
        return 0
    w = np.array([weights.get(f, 0.0) for f in STEP_FEATURES])
    return int(y[int(np.argmax(x @ w))])


Part = tuple[np.ndarray, np.ndarray, list[int]]


def _select_with_scores(
    parts: Sequence[Part], which: Sequence[int], folds: int = 5, seed: int = 0
) -> tuple[tuple[str, float], dict[int, np.ndarray]]:
    """The (penalty, C) of GRID whose weights find the most annotated steps on held-out runs
    of `which` (inner folds over runs; ties: the earlier, more regularised pair), and each
    run's candidate scores under that pair's weights fitted without it (out-of-fold)."""
    from sklearn.model_selection import KFold

    runs = np.asarray(which)
    hits = dict.fromkeys(GRID, 0)
    held: dict[tuple[str, float], dict[int, np.ndarray]] = {pc: {} for pc in GRID}
    splitter = KFold(n_splits=min(folds, len(runs)), shuffle=True, random_state=seed)
    for train, test in splitter.split(runs):
        x, y, _ = _stack(parts, runs[train])
        if len(set(y)) < 2:
            continue
        for penalty, c in GRID:
            w = _fit(x, y, c, penalty)
            hits[penalty, c] += sum(_hits(w, parts[r]) for r in runs[test])
            vector = np.array([w[f] for f in STEP_FEATURES])
            held[penalty, c] |= {int(r): parts[r][0] @ vector for r in runs[test]}
    best = max(hits.values())
    chosen = next(pc for pc in GRID if hits[pc] == best)
    return chosen, held[chosen]


def _select(
    parts: Sequence[Part], which: Sequence[int], folds: int = 5, seed: int = 0
) -> tuple[str, float]:
    """The chosen (penalty, C) of `_select_with_scores`."""
    return _select_with_scores(parts, which, folds, seed)[0]


def fit_model(
    parts: Sequence[Part], which: Sequence[int], seed: int = 0
) -> tuple[dict[str, float], float]:
    """The frozen fitting procedure on the runs `which`: weights at the (penalty, C) chosen by
    inner cross-validation, and their softmax temperature fitted on the inner folds'
    out-of-fold scores. A temperature fitted on the scores of the very runs the weights were
    fitted on is too cold (in-sample scores separate the answer too well), which overstated
    the probability out of sample; out-of-fold scores are what a new run looks like."""
    (penalty, c), held = _select_with_scores(parts, which, seed=seed)
    x, y, _ = _stack(parts, which)
    weights = _fit(x, y, c, penalty)
    runs = [r for r in which if r in held and parts[r][1].any()]
    answers = [int(np.argmax(parts[r][1])) for r in runs]
    temperature = fit_temperature([held[r] for r in runs], answers) if runs else 1.0
    return weights, temperature


def fit_weights(
    runs: Sequence[RunTrace], steps: Sequence[int], c: float | None = None, penalty: str = "l2"
) -> dict[str, float]:
    """Logistic-regression weights of the step features (positive = the annotated step); a
    feature constant over the training runs gets its PRIOR_WEIGHTS value (else 0). Without
    `c`, the penalty and its strength are chosen by an inner cross-validation over these runs."""
    parts = [run_rows(run, step) for run, step in zip(runs, steps, strict=True)]
    which = list(range(len(parts)))
    x, y, _ = _stack(parts, which)
    if c is None:
        penalty, c = _select(parts, which)
    return _fit(x, y, c, penalty)


def temperature_for(
    weights: Mapping[str, float],
    parts: Sequence[tuple[np.ndarray, np.ndarray, list[int]]],
    which: Sequence[int],
) -> float:
    """The softmax temperature of `weights` fitted on the runs `which` of `parts` only."""
    w = np.array([weights.get(f, 0.0) for f in STEP_FEATURES])
    chosen = [parts[r] for r in which if len(parts[r][1])]
    answers = [int(np.argmax(y)) if y.any() else None for _, y, _ in chosen]
    return fit_temperature([x @ w for x, _, _ in chosen], answers)


def cross_validated(
    runs: Sequence[RunTrace],
    steps: Sequence[int],
    folds: int = 10,
    seed: int = 0,
    c: float | None = None,
    penalty: str = "l2",
) -> list[Attribution | None]:
    """Each run attributed by weights (and their temperature) fitted on the other folds' runs
    only; without `c`, the penalty and its strength are also chosen on those runs alone
    (nested cross-validation) and the temperature on their inner out-of-fold scores."""
    from sklearn.model_selection import KFold

    parts = [run_rows(run, step) for run, step in zip(runs, steps, strict=True)]
    out: list[Attribution | None] = [None] * len(runs)
    splitter = KFold(n_splits=min(folds, len(runs)), shuffle=True, random_state=seed)
    for train, test in splitter.split(np.arange(len(runs))):
        if c is None:
            weights, temperature = fit_model(parts, train, seed=seed)
        else:
            x, y, _ = _stack(parts, train)
            weights = _fit(x, y, c, penalty)
            temperature = temperature_for(weights, parts, train)
        model = LinearAttributor(weights, "linear (cross-validated)", temperature)
        for i in test:
            out[i] = model.attribute(runs[i])
    return out


__all__ = [
    "C_GRID",
    "GRID",
    "PENALTIES",
    "PRIOR_WEIGHTS",
    "cross_validated",
    "fit_model",
    "fit_weights",
    "temperature_for",
    "training_rows",
]
