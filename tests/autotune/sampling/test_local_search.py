"""Front local search: untried one-knob neighbours of the feasible front, seeded, no repeats."""

from __future__ import annotations

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import TPESampler

from contextos_lab.autotune.sampling.local_search import (
    FrontLocalSearchSampler,
    feasible_front,
    grid_values,
)

KNOBS = ("a", "b", "c")


def _objective(trial: optuna.Trial) -> tuple[float, float]:
    a = trial.suggest_int("a", 0, 4)
    b = trial.suggest_float("b", 0.0, 1.0, step=0.25)
    c = trial.suggest_categorical("c", ["x", "y", "z"])
    bonus = 1.0 if (b == 0.5 and c == "z") else 0.0  # a two-knob interaction
    trial.set_constraint("floor", 0.5 if a == 4 else -0.5)
    return a + bonus, b - a * 0.1


def _study(seed: int, n: int) -> optuna.Study:
    sampler = FrontLocalSearchSampler(
        TPESampler(seed=seed, multivariate=True, n_startup_trials=5),
        seed=seed,
        every=2,
        n_startup_trials=5,
    )
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    study.optimize(_objective, n_trials=n)
    return study


def test_grid_values_enumerate_discrete_distributions_only() -> None:
    assert grid_values(IntDistribution(1, 7, step=3)) == [1, 4, 7]
    assert grid_values(FloatDistribution(0.0, 0.5, step=0.25)) == [0.0, 0.25, 0.5]
    assert grid_values(CategoricalDistribution(["p", "q"])) == ["p", "q"]
    assert grid_values(FloatDistribution(0.0, 1.0)) is None


def test_local_search_trials_are_untried_neighbours_of_the_feasible_front() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = _study(seed=3, n=40)
    trials = study.trials
    keys = [tuple(t.params[k] for k in KNOBS) for t in trials]
    moves = 0
    for t in trials[5:]:
        if t.number % 2:
            continue
        before = [u for u in trials if u.number < t.number]
        front = feasible_front(study, before)
        key = tuple(t.params[k] for k in KNOBS)
        assert key not in keys[: t.number], f"trial {t.number} repeats a tried config"
        dist = [sum(t.params[k] != f.params[k] for k in KNOBS) for f in front]
        moves += min(dist) == 1
    # every even trial after start-up is a local move while untried neighbours remain
    assert moves >= 15
    # 3 x 5 x 5 = 75 configs: 40 trials with local search never need a repeat
    assert len(set(keys)) == len(keys)


def test_local_search_is_deterministic_given_a_seed() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    first = [t.params for t in _study(seed=7, n=25).trials]
    again = [t.params for t in _study(seed=7, n=25).trials]
    assert first == again


def test_a_value_never_tried_from_a_front_group_comes_before_explored_moves() -> None:
    """The plateau on the reference harness: min_confidence 0.3 -> 0.45 was a tie at a front
    point, so a per-knob weight ranked the knob last and 0.6 (a true front point) was never
    tried there. Moves are ranked per (knob, value) and per front group instead."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {
        "m": FloatDistribution(0.3, 0.6, step=0.15),
        "q": IntDistribution(0, 1),
        "r": IntDistribution(0, 2),
    }
    tried = [  # (m, q, r) -> objective values; all feasible
        ((0.3, 0, 0), (1.0, 1.0)),  # the front member P
        ((0.45, 0, 0), (1.0, 1.0)),  # m 0.45: a tie, same group as P
        ((0.3, 1, 0), (0.5, 0.5)),  # q 1 explored from the group: it mattered
        ((0.3, 0, 1), (0.4, 0.4)),  # r 1 explored: it mattered
        ((0.45, 1, 1), (0.1, 0.1)),  # filler
    ]
    sampler = FrontLocalSearchSampler(
        TPESampler(seed=0, multivariate=True, n_startup_trials=5),
        seed=0,
        every=1,
        n_startup_trials=5,
    )
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    for (m, q, r), values in tried:
        study.add_trial(
            optuna.trial.create_trial(
                params={"m": m, "q": q, "r": r},
                distributions=dists,
                values=list(values),
                constraints={"floor": -1.0},
            )
        )
    # (m, 0.6) and (r, 2) are the moves never tried from the group (r 2 from either member)
    proposed = []
    for _ in range(2):
        trial = study.ask(dists)
        key = (round(trial.params["m"], 2), trial.params["q"], trial.params["r"])
        proposed.append(key)
        study.tell(trial, [0.2, 0.2])
    assert (0.6, 0, 0) in proposed, proposed  # the knob's last value is not ranked last
    assert next(k for k in proposed if k != (0.6, 0, 0))[2] == 2, proposed
