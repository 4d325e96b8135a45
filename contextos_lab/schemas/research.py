"""ResearchQueue tasks (seed 001): budgeted, scoped, producing a reviewable knowledge patch."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import InsightId, ResearchTaskId


class ResearchScope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: str = Field(min_length=1)
    max_external_calls: int = Field(ge=0)


class ResearchTaskStatus(StrEnum):
    queued = "queued"
    running = "running"
    completed = "completed"
    refused = "refused"


class ResearchTask(Envelope):
    id_field: ClassVar[str] = "research_task_id"
    store_kind: ClassVar[str] = "research_task"

    research_task_id: ResearchTaskId
    trigger_insight_id: InsightId
    question: str = Field(min_length=1)
    scope: ResearchScope
    status: ResearchTaskStatus = ResearchTaskStatus.queued
    produces: Literal["knowledge_patch"] = "knowledge_patch"
    #: Held-out confirmation (gate) and report attachment; filled when the file is emitted.
    confirmation: dict[str, Any] = Field(default_factory=dict)
    report: dict[str, str] | None = None
    created_at: AwareDatetime | None = None
