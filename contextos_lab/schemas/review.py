"""Reviewer verdicts and the post-release monitor window, as stored envelopes.

Seed 000 Step 5 asks for compliance, reliability and security verdicts attached before
release. A `ReviewVerdict` is one reviewer's signed verdict on one proposal or rule (HMAC over
the canonical envelope without its signature, like feedback), so "compliance=approve" typed by
anyone is no longer a verdict. A `MonitorWindow` is what release opens (seed 001: "every
runtime-affecting release needs a monitor window and rollback target").
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import AwareDatetime, Field, model_validator

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import StrategyRuleId, id_check
from contextos_lab.schemas.vocabulary import ReviewOutcome, ReviewRole

ReviewVerdictId = Annotated[str, id_check("rvw")]
MonitorWindowId = Annotated[str, id_check("mw")]


class ReviewVerdict(Envelope):
    """One reviewer's signed verdict on a StrategyProposal or a proposed StrategyRule."""

    id_field: ClassVar[str] = "review_id"
    store_kind: ClassVar[str] = "review_verdict"

    review_id: ReviewVerdictId
    subject_id: str = Field(min_length=1, description="proposal_id or rule_id reviewed")
    role: ReviewRole
    verdict: ReviewOutcome
    reviewer: str = Field(min_length=1, description="reviewer identity (signer)")
    rationale: str = Field(min_length=1)
    signed_at: AwareDatetime
    signature: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class MonitorWindow(Envelope):
    """Opened by release: the rule, its pinned baseline and the window's span."""

    id_field: ClassVar[str] = "window_id"
    store_kind: ClassVar[str] = "monitor_window"

    window_id: MonitorWindowId
    rule_id: StrategyRuleId
    proposal_id: str | None = None
    baseline_ref: str = Field(min_length=1)
    decision_key: str | None = None
    opened_at: AwareDatetime
    closes_at: AwareDatetime

    @model_validator(mode="after")
    def _span(self) -> MonitorWindow:
        if self.closes_at <= self.opened_at:
            raise ValueError("closes_at must be after opened_at")
        return self
