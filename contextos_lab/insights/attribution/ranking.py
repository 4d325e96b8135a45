"""Ranked candidates with calibrated probabilities, not one guess.

A run's candidate scores become probabilities through a softmax at a temperature fitted on
annotated training runs (`fit_temperature`: the negative log-likelihood of the annotated step
among its run's candidates, one scalar, so a few runs cannot overfit it). The top-k steps carry
their probability and the features behind them; an agent's probability is the sum over its
steps. The step probability below `LOW_CONFIDENCE` marks the attribution as low-confidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, softmax

from contextos_lab.insights.attribution.protocol import Candidate, excerpt
from contextos_lab.insights.attribution.turns import RunTrace, agent_key

#: How many steps an attribution lists (top-k).
TOP_K = 3
#: Below an even chance that the named step is the decisive one, the attribution is more
#: likely wrong than right: it is marked low-confidence (a stated threshold, not a fitted one).
LOW_CONFIDENCE = 0.5
#: Search range of the temperature (scores are sums of weights of [0, 1] features).
TEMPERATURE_BOUNDS = (0.05, 20.0)


def probabilities(scores: Sequence[float], temperature: float = 1.0) -> np.ndarray:
    """Softmax of a run's candidate scores at `temperature`."""
    return softmax(np.asarray(scores, dtype=float) / max(temperature, 1e-9))


def ranked(
    run: RunTrace,
    scored: Mapping[int, tuple[float, Mapping[str, float]]],
    temperature: float = 1.0,
    top_k: int = TOP_K,
) -> tuple[tuple[Candidate, ...], tuple[tuple[str, float], ...]]:
    """(the top-k candidates, best first; every agent with its summed probability, best
    first). Ties go to the earliest step, as the one-guess attributor's did."""
    order = sorted(scored, key=lambda i: (-scored[i][0], i))
    probs = dict(zip(order, probabilities([scored[i][0] for i in order], temperature), strict=True))
    top = []
    for i in order[:top_k]:
        fired = sorted(
            ((f, round(v, 3)) for f, v in scored[i][1].items() if v > 0), key=lambda fv: -fv[1]
        )
        turn = run.turns[i]
        top.append(
            Candidate(
                step=turn.index,
                position=i,
                agent=turn.speaker,
                score=round(float(scored[i][0]), 4),
                probability=round(float(probs[i]), 4),
                signals=tuple(fired),
                excerpt=excerpt(turn.content),
            )
        )
    mass: dict[str, float] = {}
    name: dict[str, str] = {}
    for i in order:  # the best-ranked spelling names the agent
        key = agent_key(run.turns[i].speaker)
        name.setdefault(key, run.turns[i].speaker)
        mass[key] = mass.get(key, 0.0) + float(probs[i])
    agents = sorted(mass, key=lambda k: -mass[k])  # stable: ties keep the ranking's order
    return tuple(top), tuple((name[k], round(mass[k], 4)) for k in agents)


def fit_temperature(score_sets: Sequence[np.ndarray], answers: Sequence[int | None]) -> float:
    """The temperature minimising the negative log-likelihood of each run's annotated
    candidate (`answers[r]`: its index in `score_sets[r]`; None when the annotated step is not
    a candidate, which a softmax over candidates cannot express, so it is left out)."""
    pairs = [(s, a) for s, a in zip(score_sets, answers, strict=True) if a is not None and len(s)]
    if not pairs:
        return 1.0

    def nll(t: float) -> float:
        return -sum(float(log_softmax(np.asarray(s, dtype=float) / t)[a]) for s, a in pairs)

    found = minimize_scalar(nll, bounds=TEMPERATURE_BOUNDS, method="bounded")
    return float(found.x)


__all__ = [
    "LOW_CONFIDENCE",
    "TEMPERATURE_BOUNDS",
    "TOP_K",
    "fit_temperature",
    "probabilities",
    "ranked",
]
