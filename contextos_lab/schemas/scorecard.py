"""The five evaluators' vector for one subject (a run, a config over a case set, a slice)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import AwareDatetime, Field

from contextos_lab.schemas.base import Envelope


class EvaluatorName(StrEnum):
    policy = "policy"
    safety = "safety"
    utility = "utility"
    latency = "latency"
    economics = "economics"


#: Which way is better for each evaluator. Policy and Safety are floors, never traded.
DIRECTIONS: dict[EvaluatorName, str] = {
    EvaluatorName.policy: "maximize",
    EvaluatorName.safety: "maximize",
    EvaluatorName.utility: "maximize",
    EvaluatorName.latency: "minimize",
    EvaluatorName.economics: "minimize",
}
FLOOR_EVALUATORS: frozenset[EvaluatorName] = frozenset({EvaluatorName.policy, EvaluatorName.safety})


class Scorecard(Envelope):
    """Policy, Safety, Utility in [0, 1]; Latency in modelled ms; Economics in cents/decision."""

    id_field: ClassVar[str] = "scorecard_id"
    store_kind: ClassVar[str] = "scorecard"

    scorecard_id: str = Field(min_length=1)
    subject_id: str = Field(min_length=1, description="trace id, trial id or slice name")
    decision_key: str | None = None
    policy: float = Field(ge=0.0, le=1.0)
    safety: float = Field(ge=0.0, le=1.0)
    utility: float = Field(ge=0.0, le=1.0)
    latency: float = Field(ge=0.0, description="modelled latency, ms (mean over cases)")
    economics: float = Field(ge=0.0, description="cents per decision (mean over cases)")
    n_cases: int = Field(default=1, ge=0)
    details: dict[str, Any] = Field(default_factory=dict, description="e.g. latency_p50, p95")
    computed_at: AwareDatetime

    def vector(self) -> dict[str, float]:
        return {e.value: float(getattr(self, e.value)) for e in EvaluatorName}
