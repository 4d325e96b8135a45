"""Chief-of-Staff operational notes (seed 001): to the operator surface, never to the planner."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import NoteId


class NoteKind(StrEnum):
    open_loop_aging = "open_loop_aging"
    queue_backlog = "queue_backlog"
    repeated_escalation = "repeated_escalation"
    eval_target_drift = "eval_target_drift"
    recurring_correction = "recurring_correction"


class NoteStatus(StrEnum):
    open = "open"
    acted_on = "acted_on"
    dismissed = "dismissed"


class Note(Envelope):
    id_field: ClassVar[str] = "note_id"
    store_kind: ClassVar[str] = "note"

    note_id: NoteId
    kind: NoteKind
    subject: str = Field(min_length=1)
    recommended_action: str = Field(min_length=1)
    evidence_refs: tuple[str, ...] = ()
    status: NoteStatus = NoteStatus.open
    operator: str | None = Field(default=None, description="whose surface (for the daily budget)")
    aggregated_count: int = Field(default=1, ge=1, description="signals folded into this note")
    created_at: AwareDatetime | None = Field(
        default=None, description="when emitted (seed 001's example has none)"
    )
