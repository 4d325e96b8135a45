"""Which Optuna sampler runs a study, chosen by a small seeded config (docs/design.md, "Seams").

Samplers are Optuna's own. Constraints are never passed as `constraints_func` (deprecated in
Optuna 5): the objective sets them with `trial.set_constraint`, which every sampler here reads.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

import optuna
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.autotune.sampling.local_search import FrontLocalSearchSampler
from contextos_lab.errors import MissingDependency

SamplerKind = Literal["tpe", "nsgaii", "gp", "botorch", "random", "optuna_default"]


class SamplerConfig(BaseModel):
    """`kind` + `seed`; the same config on the same spec gives the same sequence of trials.

    `tpe` is the kit's default, tuned on the reference harness (benchmarks/search_efficiency.py,
    benchmarks/search_cost.py): multivariate TPE that models the discrete knobs jointly, with a
    short random start-up because the baseline trial already anchors the search, and every
    second trial an untried one-knob neighbour of the feasible front (`local_search_every`;
    autotune.sampling.local_search), which is what takes it from the 0.9863 plateau to the whole
    true
    front by 200 trials (benchmarks/results/search_cost.json).
    `optuna_default` is whatever `optuna.create_study` picks with no sampler (kept only as a
    benchmark comparison). `gp` (Optuna's GPSampler) and `botorch` (BoTorch's qNEHVI with the
    floors as outcome constraints, through optuna-integration's BoTorchSampler) are the
    Bayesian-optimisation peers of benchmarks/search_cost.py; both need optional extras.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SamplerKind = "tpe"
    seed: int | None = Field(default=0, description="None = nondeterministic")
    n_startup_trials: int = Field(default=10, ge=0, description="random trials before modelling")
    population_size: int = Field(default=20, ge=2, description="NSGA-II only")
    local_search_every: int = Field(
        default=2,
        ge=0,
        description="tpe only: every n-th trial (and every repeat) is an untried one-knob "
        "neighbour of the feasible front (autotune.sampling.local_search); 0 = plain TPE",
    )

    def build(self, worker_index: int = 0) -> optuna.samplers.BaseSampler | None:
        """The sampler for one worker; workers get distinct seeds so they do not collide."""
        seed = None if self.seed is None else self.seed + worker_index
        if self.kind == "tpe":
            tpe = optuna.samplers.TPESampler(
                seed=seed,
                multivariate=True,
                group=False,
                n_startup_trials=self.n_startup_trials,
                n_ei_candidates=48,
                constant_liar=True,
            )
            if not self.local_search_every:
                return tpe
            return FrontLocalSearchSampler(
                tpe,
                seed=seed,
                every=self.local_search_every,
                n_startup_trials=self.n_startup_trials,
            )
        if self.kind == "nsgaii":
            return optuna.samplers.NSGAIISampler(seed=seed, population_size=self.population_size)
        if self.kind == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        if self.kind == "gp":
            if importlib.util.find_spec("torch") is None:
                raise MissingDependency(
                    "sampler kind 'gp' needs PyTorch (optuna.samplers.GPSampler); it is not "
                    "installed in this environment. Use tpe, nsgaii or random, or install the "
                    "extra: pip install 'contextos-lab[gp]'."
                )
            return optuna.samplers.GPSampler(seed=seed, n_startup_trials=self.n_startup_trials)
        if self.kind == "botorch":
            return _botorch(seed, self.n_startup_trials)
        return optuna.samplers.TPESampler(seed=seed)  # optuna_default: Optuna 5's own defaults


def _botorch(seed: int | None, n_startup_trials: int) -> optuna.samplers.BaseSampler:
    """BoTorch's qNEHVI (noisy expected hypervolume improvement, outcome constraints from
    `trial.set_constraint`) as an Optuna sampler; optuna-integration does the encoding of the
    search space, so nothing here re-implements Bayesian optimisation."""
    try:  # optuna_integration imports lazily (no __spec__), so import rather than find_spec
        import botorch  # noqa: F401
        from optuna_integration import BoTorchSampler
        from optuna_integration.botorch import qnehvi_candidates_func
    except ImportError as err:
        raise MissingDependency(
            "sampler kind 'botorch' needs BoTorch and optuna-integration; they are not "
            "installed in this environment. Use tpe, nsgaii or random, or install the extra: "
            "pip install 'contextos-lab[botorch]'."
        ) from err

    return BoTorchSampler(
        candidates_func=qnehvi_candidates_func, n_startup_trials=n_startup_trials, seed=seed
    )
