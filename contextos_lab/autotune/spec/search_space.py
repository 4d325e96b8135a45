"""Tunable surfaces -> Optuna's search space, and a config's diff from the baseline.

The optimizer sees exactly the surfaces a run spec lists, on the harness's discretised grid, so
the space Optuna searches is the space `benchmarks/search_efficiency.py` enumerates.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from pydantic import BaseModel, ConfigDict

from contextos_lab.schemas.surface import ChangeClass, TunableSurface


class SearchSpace(BaseModel):
    """The surfaces a study may change (already narrowed by the spec) and the full baseline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    surfaces: tuple[TunableSurface, ...]
    #: Every harness knob's baseline value (untuned knobs stay here for the whole study).
    base_config: dict[str, Any]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.surfaces)

    def baseline_params(self) -> dict[str, Any]:
        """Trial-0 params: the published baseline of every tuned surface."""
        return {s.name: s.baseline for s in self.surfaces}

    def distributions(self) -> dict[str, BaseDistribution]:
        return {s.name: surface_distribution(s) for s in self.surfaces}

    def suggest(self, trial: optuna.Trial) -> dict[str, Any]:
        """Params for one trial, snapped onto the surface grids."""
        params: dict[str, Any] = {}
        for surface in self.surfaces:
            dist = surface_distribution(surface)
            if isinstance(dist, CategoricalDistribution):
                value = trial.suggest_categorical(surface.name, dist.choices)
            elif isinstance(dist, IntDistribution):
                value = trial.suggest_int(surface.name, dist.low, dist.high, step=dist.step)
            else:
                assert isinstance(dist, FloatDistribution)
                value = trial.suggest_float(surface.name, dist.low, dist.high, step=dist.step)
            params[surface.name] = snap(surface, value)
        return params

    def config(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The full harness config: baseline everywhere, params on the tuned surfaces."""
        return {**self.base_config, **self.baseline_params(), **dict(params)}

    def size(self) -> int:
        n = 1
        for s in self.surfaces:
            n *= len(s.grid())
        return n

    def enumerate(self) -> Iterator[dict[str, Any]]:
        """Every point of the grid (for exhaustive benchmarks on small spaces)."""
        names = self.names
        for values in itertools.product(*(s.grid() for s in self.surfaces)):
            yield dict(zip(names, values, strict=True))

    def diff(self, params: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """`{surface: {"from": baseline, "to": value}}` for each changed surface (seed's shape)."""
        return {
            s.name: {"from": s.baseline, "to": params[s.name]}
            for s in self.surfaces
            if s.name in params and params[s.name] != s.baseline
        }

    def change_summary(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Blast radius and explainability of a candidate (seed 001's ranking criteria)."""
        by_name = {s.name: s for s in self.surfaces}
        changed = [by_name[name] for name in self.diff(params)]
        n_control = sum(1 for s in changed if is_control_flow(s))
        size = sum(_step_distance(s, params[s.name]) for s in changed)
        return {
            "n_changed": len(changed),
            "n_additive": len(changed) - n_control,
            "n_control_flow": n_control,
            "layers": sorted({s.layer.value for s in changed}),
            "diff_size": round(size, 6),
        }


def is_control_flow(surface: TunableSurface) -> bool:
    """The harness declares each knob's change class; the seed weighs control-flow as riskier."""
    return surface.change_class == ChangeClass.control_flow


def surface_distribution(surface: TunableSurface) -> BaseDistribution:
    """Numeric knobs keep their order (TPE models it); the rest are categorical."""
    if surface.kind in ("bool", "categorical"):
        return CategoricalDistribution(tuple(surface.grid()))
    grid = surface.grid()
    if surface.kind == "int":
        step = int(grid[1] - grid[0]) if len(grid) > 1 else 1
        return IntDistribution(int(grid[0]), int(grid[-1]), step=step)
    # Rounded so Optuna's decimal check sees (high - low) as a whole number of steps.
    step_f = round(float(grid[1]) - float(grid[0]), 10) if len(grid) > 1 else None
    return FloatDistribution(float(grid[0]), float(grid[-1]), step=step_f)


def snap(surface: TunableSurface, value: Any) -> Any:
    """The grid value nearest to `value` (floats drift by an ulp through Optuna's step maths)."""
    grid = surface.grid()
    if surface.kind not in ("int", "float"):
        return value
    return min(grid, key=lambda g: abs(float(g) - float(value)))


def on_grid(surface: TunableSurface, value: Any) -> bool:
    grid = surface.grid()
    if surface.kind in ("int", "float"):
        return any(abs(float(g) - float(value)) <= 1e-9 for g in grid)
    return value in grid


def _step_distance(surface: TunableSurface, value: Any) -> float:
    """How far a knob moved, in grid steps (1 for any categorical or bool change)."""
    if surface.kind not in ("int", "float"):
        return 1.0
    grid: Sequence[Any] = surface.grid()
    if len(grid) < 2:
        return 0.0
    step = float(grid[1]) - float(grid[0])
    return abs(float(value) - float(surface.baseline)) / step
