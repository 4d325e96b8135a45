"""Patterns over corrections and runs: seed 000's InsightCluster and seed 001's Insight."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import AwareDatetime, Field, model_validator

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.feedback import ReasonClass
from contextos_lab.schemas.ids import FeedbackId, InsightId
from contextos_lab.schemas.lifecycle import LifecycleStatus, Transition
from contextos_lab.schemas.vocabulary import MIN_CLUSTER_SIZE


class InsightCluster(Envelope):
    """Corrections grouped by (decision_key, override_reason_class) (seed 000, Step 2)."""

    id_field: ClassVar[str] = "insight_id"
    store_kind: ClassVar[str] = "insight_cluster"

    insight_id: InsightId
    decision_key: str = Field(min_length=1)
    override_reason_class: ReasonClass
    count: int = Field(ge=MIN_CLUSTER_SIZE)
    feedback_ids: tuple[FeedbackId, ...]
    earliest: AwareDatetime
    latest: AwareDatetime
    representative_evidence_refs: tuple[str, ...] = ()
    representative_field_overrides: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> InsightCluster:
        if self.count != len(self.feedback_ids):
            raise ValueError(f"count {self.count} != len(feedback_ids) {len(self.feedback_ids)}")
        if self.earliest > self.latest:
            raise ValueError("earliest is after latest")
        return self


class InsightKind(StrEnum):
    failure_cluster = "failure_cluster"
    gap_detected = "gap_detected"
    blocked_decision = "blocked_decision"
    common_detour = "common_detour"
    over_escalation = "over-escalation"


class Insight(Envelope):
    """A typed recurring pattern with occurrences, window, evidence and support (seed 001)."""

    id_field: ClassVar[str] = "insight_id"
    store_kind: ClassVar[str] = "insight"

    insight_id: InsightId
    kind: InsightKind
    intent: str = Field(min_length=1)
    pattern: str = Field(min_length=1)
    occurrences: int = Field(ge=1)
    first_seen: AwareDatetime
    last_seen: AwareDatetime
    evidence_refs: tuple[str, ...] = ()
    #: Seed 001's field, kept where the seed puts it, with an honest value: 1 − the
    #: Benjamini–Hochberg q-value of the insight's test among all tests of its source
    #: (`insights.findings.fdr`); 0 when no test could be run (no successful baseline, no
    #: variance). Not a posterior probability; `support.standing` says finding / exploratory.
    confidence: float = Field(
        ge=0.0,
        le=1.0,
        description="1 - Benjamini-Hochberg q-value of the insight's test within its source; "
        "0 when no test ran (support.standing is then 'exploratory')",
    )
    status: LifecycleStatus = LifecycleStatus.proposed
    history: tuple[Transition, ...] = ()
    #: How `confidence` was computed (test, baseline, p- and q-value, standing, interval,
    #: rates); never invented.
    support: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _window(self) -> Insight:
        if self.first_seen > self.last_seen:
            raise ValueError("first_seen is after last_seen")
        return self
