"""Autotune's output (seed 001): a TuningProposal, never a production patch."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import TuningProposalId
from contextos_lab.schemas.lifecycle import LifecycleStatus, Transition


class Direction(StrEnum):
    increase = "increase"
    decrease = "decrease"


class TuningTarget(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    intent: str = Field(min_length=1)
    metric: str = Field(min_length=1)
    direction: Direction
    guardrails: tuple[str, ...] = Field(default=(), examples=[["safety>=1.0", "policy>=1.0"]])


class BaselineTuple(BaseModel):
    """Pins everything the comparison holds fixed (seed 001, `baseline_tuple`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pack: str
    policy: str
    tool_manifest: str
    evaluator_suite: str
    model_profile: str


class ValueChange(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    from_: Any = Field(alias="from")
    to: Any


class CandidateChange(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    layer: str = Field(min_length=1)
    diff: dict[str, ValueChange]


class ReportRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class FrontierPoint(BaseModel):
    """One operating point of a sweep's promoted family (seed 001, "Pareto-frontier proposals":
    the operator picks a frontier point rather than a single scalar winner)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int = Field(ge=1, description="1 = recommended (target gain, blast radius, clarity)")
    candidate_id: str
    trial_number: int
    change: CandidateChange
    expected_delta: dict[str, Any]
    target_p_adjusted: float
    #: Provenance of an outside proposal (`contextos-lab enqueue`); None for sampler trials.
    proposer: dict[str, Any] | None = None


class TuningProposal(Envelope):
    id_field: ClassVar[str] = "tuning_proposal_id"
    store_kind: ClassVar[str] = "tuning_proposal"

    tuning_proposal_id: TuningProposalId
    target: TuningTarget
    guardrails: dict[str, Any] = Field(default_factory=dict)
    # Seed 001's own TuningProposal example omits the run declarations, so they are optional
    # here; the gate's emitter (proposals/files/emit.py) always fills them from the run spec.
    baseline_tuple: BaselineTuple | None = None
    tunable_surfaces: tuple[str, ...] | None = None
    search_set: str | None = Field(
        default=None, min_length=1, description="manifest hash or path of the search set"
    )
    heldout_test_set: str | None = Field(default=None, min_length=1)
    rollback_target: str | None = Field(default=None, min_length=1)
    candidate_change: CandidateChange
    expected_delta: dict[str, Any]
    evaluation_run_id: str = Field(min_length=1)
    gate: dict[str, Any] = Field(default_factory=dict, description="verdict, tests, read count")
    report: ReportRef | None = None
    #: Every promoted operating point of the sweep, best first; `candidate_change` is rank 1.
    operating_points: tuple[FrontierPoint, ...] = ()
    status: LifecycleStatus = LifecycleStatus.proposed
    history: tuple[Transition, ...] = ()
