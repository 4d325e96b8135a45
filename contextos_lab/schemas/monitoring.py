"""After release: MonitorVerdict and SourceClosure (seed 001, monitor window, source closure).

Seed 001 asks for "monitor verdicts bound to released proposal id and baseline tuple" and for
source pressure "explicitly marked fixed, still_failing, invalid, or superseded; failed attempts
add recurrence metadata instead of disappearing".
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import StrategyRuleId, id_check
from contextos_lab.schemas.vocabulary import ClosureStatus

MonitorVerdictId = Annotated[str, id_check("mv")]
SourceClosureId = Annotated[str, id_check("scl")]


class MonitorDecision(StrEnum):
    keep = "keep"
    roll_back = "roll_back"
    supersede = "supersede"
    retire = "retire"


class EvaluatorEvidence(BaseModel):
    """One evaluator's baseline-vs-window comparison. Verdicts stored before issue 42 carry a
    fresh Mann–Whitney p; since then `p_value` is the sequential p over the window's calendar
    looks so far (see proposals/monitor/sequential.py) and the optional fields are filled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline_mean: float
    window_mean: float
    delta: float
    p_value: float | None
    worse: bool
    z: float | None = Field(default=None, description="harm-oriented statistic at the last look")
    boundary: float | None = Field(default=None, description="its boundary (None: none yet)")
    ci_low: float | None = Field(default=None, description="repeated confidence interval of delta")
    ci_high: float | None = None
    alpha_share: float | None = Field(default=None, description="this evaluator's error share")
    alpha_spent: float | None = Field(default=None, description="share spent through the last look")
    crossed_day: int | None = Field(default=None, description="look whose boundary was crossed")
    decisive_day: int | None = Field(
        default=None, description="day the boundary would be crossed if the current delta held"
    )


class MonitorLook(BaseModel):
    """One calendar look (day boundary) of the window: what was seen and the running statistic."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    day: int = Field(ge=1)
    until: AwareDatetime
    n_window: int = Field(ge=0)
    z: dict[str, float] = Field(default_factory=dict)
    boundary: dict[str, float | None] = Field(default_factory=dict)
    crossed: tuple[str, ...] = ()
    # a probability: a stored negative or > 1 value would hand later looks error never allowed
    spent: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=dict, description="error each evaluator spent at this look, own law"
    )


class MonitorVerdict(Envelope):
    """Keep / roll back / supersede / retire for a released rule, with the evidence."""

    id_field: ClassVar[str] = "monitor_verdict_id"
    store_kind: ClassVar[str] = "monitor_verdict"

    monitor_verdict_id: MonitorVerdictId
    rule_id: StrategyRuleId
    proposal_id: str | None = None
    baseline_ref: str | None = Field(default=None, description="the rule's pinned baseline")
    verdict: MonitorDecision
    reasons: tuple[str, ...]
    n_baseline: int = Field(ge=0)
    n_window: int = Field(ge=0)
    n_window_matched: int | None = Field(default=None, ge=0, description="decisions it covers")
    evidence: dict[str, EvaluatorEvidence] = Field(default_factory=dict)
    recurrence: int = Field(default=0, ge=0, description="source corrections after release")
    superseded_by: str | None = None
    thresholds: dict[str, float] = Field(default_factory=dict)
    decided_at: AwareDatetime
    window_id: str | None = Field(default=None, description="the MonitorWindow looked at")
    days: int | None = Field(default=None, ge=1, description="calendar looks in the window")
    looks: tuple[MonitorLook, ...] = Field(default=(), description="every look so far")
    window_open: bool | None = Field(default=None, description="False once the window ran out")


class SourceClosure(Envelope):
    """The verdict on the source pressure (insight, replay case) that started a change."""

    id_field: ClassVar[str] = "closure_id"
    store_kind: ClassVar[str] = "source_closure"

    closure_id: SourceClosureId
    source_id: str = Field(min_length=1)
    source_kind: str = Field(min_length=1, examples=["insight_cluster", "replay_case"])
    status: ClosureStatus
    rationale: str = Field(min_length=1)
    rule_id: str | None = None
    evidence_ids: tuple[str, ...] = ()
    #: attempt number, prior closure ids, failed attempts so far, first/last failure time.
    recurrence: dict[str, Any] = Field(default_factory=dict)
    closed_at: AwareDatetime
