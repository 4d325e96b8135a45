"""What a run decided, with the inputs the decision was made on (the replay contract)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import AwareDatetime, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import DecisionRecordId


class TerminalStatus(StrEnum):
    completed = "COMPLETED"
    escalated = "ESCALATED"
    denied = "DENIED"
    blocked = "BLOCKED"
    failed = "FAILED"


class DecisionRecord(Envelope):
    """One decision by the harness, bound to its trace.

    `inputs` are the facts a policy bundle evaluates (the fields its rules name; the evidence
    present is `evidence_refs`); replaying the record against a pinned bundle must reproduce
    `outputs_hash`.
    """

    id_field: ClassVar[str] = "record_id"
    store_kind: ClassVar[str] = "decision_record"

    record_id: DecisionRecordId
    trace_id: str = Field(min_length=1)
    decision_key: str = Field(min_length=1)
    intent: str | None = None
    status: TerminalStatus
    decision: str = Field(min_length=1, description="what was decided, e.g. approve/deny/escalate")
    inputs: dict[str, Any] = Field(default_factory=dict)
    evidence_refs: tuple[str, ...] = ()
    evidence_refs_missing: tuple[str, ...] = ()
    tool_calls: tuple[str, ...] = ()
    outputs_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    pack_version: str | None = None
    policy_version: str | None = None
    session_id: str | None = None
    decided_at: AwareDatetime
