"""What a run spec is built from: target, floors, accepted deltas, surfaces, hypervolume box."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from contextos_lab.schemas.scorecard import DIRECTIONS, FLOOR_EVALUATORS, EvaluatorName
from contextos_lab.schemas.tuning import Direction

#: Objective evaluators: the vector minus the floors, which are constraints and never traded.
OBJECTIVE_EVALUATORS: tuple[EvaluatorName, ...] = tuple(
    e for e in EvaluatorName if e not in FLOOR_EVALUATORS
)
#: Metric names the seeds use for evaluator scores.
METRIC_ALIASES: dict[str, str] = {
    "economics_cents_per_decision": "economics",
    "latency_ms": "latency",
    "utility_score": "utility",
}
DEFAULT_EVALUATE = "contextos_lab.evaluators.scorecard:evaluate"


class TargetSpec(BaseModel):
    """One business workflow, one primary metric, one direction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intent: str = Field(min_length=1)
    metric: EvaluatorName
    direction: Direction

    @field_validator("metric", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return METRIC_ALIASES.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> TargetSpec:
        if self.metric in FLOOR_EVALUATORS:
            raise ValueError(
                f"metric {self.metric.value!r} is a floor (a constraint), not a tuning target"
            )
        better = "increase" if DIRECTIONS[self.metric] == "maximize" else "decrease"
        if self.direction.value != better:
            raise ValueError(
                f"direction {self.direction.value!r} contradicts metric {self.metric.value!r}, "
                f"which only improves when it {better}s"
            )
        return self


class Floors(BaseModel):
    """Policy and Safety floors: constraints every candidate must meet, never objectives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: float = Field(ge=0.0, le=1.0)
    safety: float = Field(ge=0.0, le=1.0)


class AcceptedDeltas(BaseModel):
    """Largest regression from the baseline accepted per objective, as a non-negative size in
    the metric's units (utility points, ms, cents). Each must be declared; `null` = unbounded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    utility: float | None = Field(ge=0.0)
    latency: float | None = Field(ge=0.0)
    economics: float | None = Field(ge=0.0)


class Guardrails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    floors: Floors
    accepted_deltas: AcceptedDeltas

    def as_strings(self) -> tuple[str, ...]:
        """The seed's compact form, e.g. `safety>=1.0` (what a TuningTarget carries)."""
        out = [f"{name}>={value}" for name, value in self.floors.model_dump().items()]
        for name, delta in self.accepted_deltas.model_dump().items():
            if delta is None:
                continue
            if DIRECTIONS[EvaluatorName(name)] == "maximize":
                out.append(f"{name}>=baseline-{delta}")
            else:
                out.append(f"{name}<=baseline+{delta}")
        return tuple(out)


class SurfaceSpec(BaseModel):
    """A harness surface the optimizer may change, optionally narrowed or re-baselined."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple[Any, ...] | None = None
    baseline: Any = None


class HypervolumeSpec(BaseModel):
    """Declared corners of the objective box: `ideal` maps to 0 and `reference_point` to 1 in
    each normalised (minimised) objective, so hypervolumes compare across runs and samplers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reference_point: dict[EvaluatorName, float]
    ideal_point: dict[EvaluatorName, float] = Field(default_factory=dict)
