"""Typed changes and their evidence: StrategyProposal, ReplayVerdict, StrategyRule."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import (
    FeedbackId,
    InsightId,
    ReplayVerdictId,
    StrategyProposalId,
    StrategyRuleId,
)
from contextos_lab.schemas.lifecycle import LifecycleStatus, Transition
from contextos_lab.schemas.vocabulary import AdjustmentLayer


class ProposalClass(StrEnum):
    tighten_evidence_requirement = "tighten_evidence_requirement"
    lower_approval_threshold = "lower_approval_threshold"
    raise_approval_threshold = "raise_approval_threshold"
    adjust_intent_rubric = "adjust_intent_rubric"
    add_redaction_rule = "add_redaction_rule"
    add_policy_rule = "add_policy_rule"


class PatchTarget(StrEnum):
    policy_bundle = "policy_bundle"
    context_pack = "context_pack"
    intent_rubric = "intent_rubric"


class PatchOp(StrEnum):
    add = "add"
    modify = "modify"
    deprecate = "deprecate"


class Patch(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    target: PatchTarget
    target_id: str = Field(min_length=1, examples=["MY_POLICY_V1"])
    op: PatchOp
    body: dict[str, Any]


class ExpectedImpact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    runs_affected_per_day: float = Field(ge=0)
    expected_decision_change_rate: float = Field(ge=0.0, le=1.0)


class StrategyProposal(Envelope):
    """A typed candidate change compiled from an insight (seed 000, Step 3)."""

    id_field: ClassVar[str] = "proposal_id"
    store_kind: ClassVar[str] = "strategy_proposal"

    proposal_id: StrategyProposalId
    insight_id: InsightId
    proposal_class: ProposalClass
    patch: Patch
    rationale: str = Field(min_length=1)
    expected_impact: ExpectedImpact
    rollback_target: str | None = None
    status: LifecycleStatus = LifecycleStatus.proposed
    history: tuple[Transition, ...] = ()
    reviewer_verdicts: dict[str, str] = Field(
        default_factory=dict, description="compliance / security / reliability → verdict"
    )


class ReplayClassification(StrEnum):
    unchanged_baseline = "unchanged_baseline"
    changed_to_expected = "changed_to_expected"
    changed_unexpected = "changed_unexpected"


#: The note of an unchanged golden whose expected change did not happen: the replay is not
#: clean (the patch does not do what its goldens say it must).
EXPECTED_MISSED = "expected change did not happen"


class ReplayStatus(StrEnum):
    replay_clean = "replay_clean"
    replay_regression = "replay_regression"
    replay_partial = "replay_partial"


class ScorecardsDelta(BaseModel):
    """Mean candidate − baseline score across goldens (seed 000 names economics `cost`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: float
    safety: float
    utility: float
    latency: float
    cost: float


class ReplayDetail(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_id: str
    classification: ReplayClassification
    note: str | None = None


class ReplayVerdict(Envelope):
    """The replay gate's verdict against goldens (seed 000, Step 4), exactly."""

    id_field: ClassVar[str] = "verdict_id"
    store_kind: ClassVar[str] = "replay_verdict"

    verdict_id: ReplayVerdictId
    #: the StrategyProposal replayed, or the proposed adjustment-layer StrategyRule
    proposal_id: StrategyProposalId | StrategyRuleId
    goldens_total: int = Field(ge=0)
    goldens_changed: int = Field(ge=0)
    unchanged_baseline: int = Field(ge=0)
    changed_to_expected: int = Field(ge=0)
    changed_unexpected: int = Field(ge=0)
    scorecards_delta: ScorecardsDelta
    status: ReplayStatus
    details: tuple[ReplayDetail, ...]
    computed_at: AwareDatetime

    @model_validator(mode="after")
    def _totals(self) -> ReplayVerdict:
        C = ReplayClassification
        counts = {c: sum(1 for d in self.details if d.classification == c) for c in C}
        problems = []
        if self.goldens_total != len(self.details):
            problems.append(f"goldens_total {self.goldens_total} != {len(self.details)} details")
        if self.unchanged_baseline != counts[C.unchanged_baseline]:
            problems.append("unchanged_baseline does not match details")
        if self.changed_to_expected != counts[C.changed_to_expected]:
            problems.append("changed_to_expected does not match details")
        if self.changed_unexpected != counts[C.changed_unexpected]:
            problems.append("changed_unexpected does not match details")
        if self.goldens_changed != self.changed_to_expected + self.changed_unexpected:
            problems.append("goldens_changed != changed_to_expected + changed_unexpected")
        missed = sum(
            1
            for d in self.details
            if d.classification == C.unchanged_baseline
            and (d.note or "").startswith(EXPECTED_MISSED)
        )
        expected = (
            ReplayStatus.replay_regression
            if counts[C.changed_unexpected]
            else ReplayStatus.replay_partial
            if counts[C.changed_to_expected] == 0 or missed
            else ReplayStatus.replay_clean
        )
        if self.status != expected:
            problems.append(f"status {self.status.value} but details imply {expected.value}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Adjustment(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    layer: AdjustmentLayer
    type: str = Field(min_length=1, examples=["tool_preference"])
    value: dict[str, Any]


class EffectiveWindow(BaseModel):
    """`{from, to?}` on the wire; `from` is a Python keyword, so the attribute is `from_`."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    from_: AwareDatetime = Field(alias="from")
    to: AwareDatetime | None = None


class Lineage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    feedback_ids: tuple[FeedbackId, ...]
    insight_id: InsightId
    replay_verdict_id: ReplayVerdictId | None = None


#: Seed 000's StrategyRule statuses, read as the shared lifecycle's states.
SEED_000_RULE_STATUS: dict[str, str] = {
    "active": LifecycleStatus.released.value,
    "deprecated": LifecycleStatus.retired.value,
}


class StrategyRule(Envelope):
    """A released (or proposed) rule with pinned baseline and full lineage.

    Seed 000 gives the release envelope (patch, pinned_baseline, effective_window, lineage);
    seed 001 the layer adjustment (applies_to, trigger, adjustment). Seed 000's `active` is the
    lifecycle's `released`, its `deprecated` is `retired`.
    """

    id_field: ClassVar[str] = "rule_id"
    store_kind: ClassVar[str] = "strategy_rule"

    rule_id: StrategyRuleId = Field(validation_alias=AliasChoices("rule_id", "strategy_rule_id"))
    proposal_id: StrategyProposalId | None = None
    applies_to: dict[str, Any] = Field(default_factory=dict)
    trigger: dict[str, Any] = Field(default_factory=dict)
    adjustment: Adjustment | None = None
    patch: Patch | None = None
    release_gate_target: str | None = None
    released_at: AwareDatetime | None = None
    released_by: str | None = None
    pinned_baseline: str | None = None
    effective_window: EffectiveWindow | None = None
    lineage: Lineage | None = None
    status: LifecycleStatus = LifecycleStatus.proposed
    history: tuple[Transition, ...] = ()

    @field_validator("status", mode="before")
    @classmethod
    def _seed_000_status(cls, value: object) -> object:
        """Seed 000 writes a StrategyRule's status as `active` / `deprecated`."""
        return SEED_000_RULE_STATUS.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _released_fields(self) -> StrategyRule:
        if self.adjustment is None and self.patch is None:
            raise ValueError("a StrategyRule needs an adjustment or a patch")
        if self.status == LifecycleStatus.released:
            required = (
                "released_at",
                "released_by",
                "pinned_baseline",
                "effective_window",
                "lineage",
            )
            missing = [name for name in required if getattr(self, name) in (None, "")]
            if missing:
                raise ValueError(f"released rule is missing {', '.join(missing)}")
        return self

    @property
    def active(self) -> bool:
        return self.status == LifecycleStatus.released
