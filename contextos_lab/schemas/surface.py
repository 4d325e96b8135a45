"""A tunable surface: one knob a harness declares (its layer, domain, baseline, blast radius).

A schema, not harness code: a project's config names its surfaces too, so they sit below both.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class SurfaceLayer(StrEnum):
    """Where a knob lives (seed 001's adjustment layers, plus policy)."""

    prompt = "prompt"
    planner = "planner"
    retrieval = "retrieval"
    tool_selection = "tool_selection"
    memory_recall = "memory_recall"
    budget_allocation = "budget_allocation"
    policy = "policy"


class ChangeClass(StrEnum):
    """Seed 001's blast-radius distinction: additive changes carry less regression risk."""

    additive = "additive"
    control_flow = "control_flow"


#: Layers whose changes the seed calls additive (retrieval, evidence injection, memory, prompt).
ADDITIVE_LAYERS: frozenset[SurfaceLayer] = frozenset(
    {SurfaceLayer.retrieval, SurfaceLayer.memory_recall, SurfaceLayer.prompt}
)


class TunableSurface(BaseModel):
    """One knob a harness declares: its layer, domain, baseline and blast radius."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    layer: SurfaceLayer
    kind: Literal["int", "float", "categorical", "bool"]
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple[Any, ...] | None = None
    baseline: Any
    change_class: ChangeClass
    description: str = ""

    @model_validator(mode="after")
    def _domain(self) -> TunableSurface:
        if self.kind in ("int", "float"):
            if self.low is None or self.high is None or self.low > self.high:
                raise ValueError(f"surface {self.name}: numeric kind needs low <= high")
        elif self.kind == "categorical" and not self.choices:
            raise ValueError(f"surface {self.name}: categorical kind needs choices")
        if not self.contains(self.baseline):
            raise ValueError(f"surface {self.name}: baseline {self.baseline!r} outside its domain")
        return self

    def contains(self, value: Any) -> bool:
        if self.kind == "bool":
            return isinstance(value, bool)
        if self.kind == "categorical":
            return value in (self.choices or ())
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind == "int" and int(value) != value:
            return False
        assert self.low is not None and self.high is not None
        return self.low <= value <= self.high

    def grid(self) -> tuple[Any, ...]:
        """The discretised domain (used for exhaustive enumeration and Optuna's space)."""
        if self.kind == "bool":
            return (False, True)
        if self.kind == "categorical":
            return tuple(self.choices or ())
        assert self.low is not None and self.high is not None
        step = self.step or (1 if self.kind == "int" else (self.high - self.low) / 10)
        n = round((self.high - self.low) / step)
        values = [self.low + i * step for i in range(n + 1)]
        if self.kind == "int":
            return tuple(round(v) for v in values)
        return tuple(round(v, 10) for v in values)
