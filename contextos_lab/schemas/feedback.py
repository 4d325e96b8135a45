"""Operator corrections: seed 000's FeedbackEntry and seed 001's FeedbackRecord."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import DecisionRecordId, FeedbackId
from contextos_lab.schemas.reason_classes import check_reason_class

ReasonClass = Annotated[str, AfterValidator(check_reason_class)]


class OverrideKind(StrEnum):
    approve = "approve"
    deny = "deny"
    modify = "modify"


class ExpectedOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    terminal_state: str | None = None
    field_overrides: dict[str, Any] = Field(default_factory=dict)


class FeedbackEntry(Envelope):
    """One signed, immutable operator override (seed 000, Step 1).

    Never edited: a mistake is corrected by a new entry whose `supersedes` names this one.
    `signature` is the HMAC-SHA256 of the canonical entry without the signature field.
    """

    id_field: ClassVar[str] = "id"
    store_kind: ClassVar[str] = "feedback_entry"

    id: FeedbackId
    trace_id: str = Field(min_length=1)
    decision_record_id: DecisionRecordId
    decision_key: str = Field(min_length=1, examples=["my.workflow.execute"])
    override_kind: OverrideKind
    override_reason_class: ReasonClass
    override_reason_text: str | None = None
    expected_outcome: ExpectedOutcome = Field(default_factory=ExpectedOutcome)
    evidence_refs_seen: tuple[str, ...] = ()
    evidence_refs_missing: tuple[str, ...] = ()
    signed_by: str = Field(min_length=1)
    signed_at: AwareDatetime
    supersedes: FeedbackId | None = None
    signature: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class FeedbackKind(StrEnum):
    correction = "correction"
    tip = "tip"
    escalation_rationale = "escalation_rationale"
    gate_rationale = "gate_rationale"


class FeedbackContext(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    decision_record_id: DecisionRecordId | None = None
    intent: str | None = None


class FeedbackRecord(Envelope):
    """A correction, tip or rationale with provenance (seed 001, FeedbackStore)."""

    id_field: ClassVar[str] = "feedback_id"
    store_kind: ClassVar[str] = "feedback_record"

    feedback_id: FeedbackId
    kind: FeedbackKind
    context: FeedbackContext = Field(default_factory=FeedbackContext)
    operator: str = Field(min_length=1)
    correction: str
    applied_to_record: str | None = None
    evidence_refs: tuple[str, ...] = ()
    captured_at: AwareDatetime
