"""Every sampler kind a spec may name builds, or says which extra it needs."""

from __future__ import annotations

import sys

import optuna
import pytest

from contextos_lab.autotune.sampling.config import SamplerConfig


@pytest.mark.parametrize("kind", ["tpe", "nsgaii", "random", "optuna_default"])
def test_core_kinds_build_without_extras(kind: str) -> None:
    assert isinstance(SamplerConfig(kind=kind).build(), optuna.samplers.BaseSampler)


def test_botorch_without_its_extra_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "botorch", None)  # what an environment without it imports
    with pytest.raises(RuntimeError, match=r"contextos-lab\[botorch\]"):
        SamplerConfig(kind="botorch").build()


def test_botorch_proposes_feasible_aware_trials_when_installed() -> None:
    pytest.importorskip("botorch", reason="optional extra [botorch] not installed")
    study = optuna.create_study(
        directions=["maximize", "minimize"],
        sampler=SamplerConfig(kind="botorch", seed=0, n_startup_trials=3).build(),
    )

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x = trial.suggest_categorical("x", [0, 1, 2, 3])
        trial.set_constraint("floor", 0.5 - x)  # x = 0 is infeasible
        return float(x), float(x * x)

    study.optimize(objective, n_trials=4)
    assert len(study.trials) == 4 and study.trials[-1].state.name == "COMPLETE"
