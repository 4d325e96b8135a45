"""The local search's caches change its time, never its proposals: a seeded study with the
kit's default sampler proposes exactly the params recorded from the uncached implementation
(fixtures/local_search_proposals.json, written by the code of main before the caches)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import optuna

from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.sampling.local_search import _key, _outcome, feasible_front
from contextos_lab.autotune.sampling.trial_rows import TrialRows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "local_search_proposals.json"
SEEDS = (0, 5)
TRIALS = 80


def _noise(params: dict[str, Any]) -> float:
    """A seeded, config-keyed wobble, so ties and near-ties both occur."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).digest()
    return digest[0] / 255.0


def _objective(trial: optuna.Trial) -> tuple[float, float, float]:
    a = trial.suggest_int("a", 0, 5)
    b = trial.suggest_float("b", 0.0, 1.0, step=0.25)
    c = trial.suggest_categorical("c", ["x", "y", "z"])
    d = trial.suggest_categorical("d", [1, 2, 4, 8])
    e = trial.suggest_int("e", 10, 30, step=10)
    params = dict(trial.params)
    bonus = 1.0 if (b == 0.5 and c == "z") else 0.0
    utility = round(a * 0.3 + bonus + (0.2 if d == 4 else 0.0) + 0.1 * _noise(params), 2)
    latency = round(e * 0.1 + d * 0.05 + (0.5 if c == "x" else 0.0), 2)
    cost = round(a + b, 2) if e != 30 else round(a, 2)  # e=30 ties b away in cost
    trial.set_constraint("floor", 0.5 if (a == 5 and b > 0.5) else -0.5)
    return utility, latency, cost


def proposals(seed: int, n: int = TRIALS) -> list[dict[str, Any]]:
    """The params of every trial of a seeded study run by the kit's default sampler."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = SamplerConfig(seed=seed).build()
    study = optuna.create_study(directions=["maximize", "minimize", "minimize"], sampler=sampler)
    study.optimize(_objective, n_trials=n)
    return [dict(t.params) for t in study.trials]


def test_cached_local_search_proposes_what_the_uncached_one_did() -> None:
    recorded = json.loads(FIXTURE.read_text())
    for seed in SEEDS:
        assert proposals(seed) == recorded[str(seed)], f"seed {seed}"


if __name__ == "__main__":  # re-record (only from the uncached implementation)
    FIXTURE.write_text(json.dumps({str(s): proposals(s) for s in SEEDS}, indent=0) + "\n")


def _finished_study(seed: int, n: int) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        directions=["maximize", "minimize", "minimize"],
        sampler=optuna.samplers.RandomSampler(seed=seed),
    )
    study.optimize(_objective, n_trials=n)
    return study


def test_the_incremental_front_is_the_front_of_all_finished_trials() -> None:
    study = _finished_study(seed=1, n=60)
    rows = TrialRows(_key, _outcome)
    trials = study.trials
    for end in (3, 4, 10, 11, 25, 40, 60):  # uneven steps: several trials finish between calls
        rows.sync(study, sorted(trials[0].params), trials[:end])
        got = rows.front_of(trials[:end], lambda pool: feasible_front(study, pool))
        assert [t.number for t in got] == [t.number for t in feasible_front(study, trials[:end])]


def test_rows_start_afresh_for_another_study_or_knob_set() -> None:
    first, second = _finished_study(seed=2, n=12), _finished_study(seed=3, n=12)
    names = sorted(first.trials[0].params)
    rows = TrialRows(_key, _outcome)
    rows.sync(first, names, first.trials)
    rows.sync(second, names, second.trials)
    assert rows.tried == {_key(t.params, names) for t in second.trials}
    rows.sync(second, names[:2], second.trials)
    assert rows.tried == {_key(t.params, names[:2]) for t in second.trials}
    assert all(r.codes is None for r in rows.rows.values())  # no trial sets only two knobs
