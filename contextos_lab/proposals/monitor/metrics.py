"""The loop's evaluation metrics (seed 001), computed from what the store holds.

- adoption rate: proposals (StrategyProposals and layer StrategyRules) that reached `released` /
  those that reached `reviewed`;
  flagged outside ADOPTION_BAND (below: the loop proposes noise; above: review rubber-stamps);
- detection lead time: the source cluster's first correction (the regression showing up) →
  the proposal (StrategyProposal or layer StrategyRule) first written to the store, median hours;
- correction-to-proposal latency: first correction in a released rule's lineage → release
  (seed: "operator correction → derived StrategyRule"), median hours;
- time to close a repeated issue: the cluster's second correction (first repeated signal) →
  the source closure marking it fixed (released and monitored, no rollback), median hours;
- post-release rollback rate: released rules rolled back (retired with a `rollback:`
  rationale) or superseded / released rules;
- retire rate: released rules retired (not rolled back) within 90 days / released rules;
- notes acted on: Chief-of-Staff notes `acted_on` / all notes;
- research patch yield: research tasks completed with `confirmation["promoted"]` true / all.
A rate with nothing to count is None, not 0.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from statistics import median
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.lifecycle import LifecycleStatus
from contextos_lab.schemas.monitoring import ClosureStatus, SourceClosure
from contextos_lab.schemas.notes import Note, NoteStatus
from contextos_lab.schemas.research import ResearchTask, ResearchTaskStatus
from contextos_lab.schemas.strategy import StrategyProposal, StrategyRule

ADOPTION_BAND = (0.30, 0.60)
RETIRE_WINDOW = timedelta(days=90)
S = LifecycleStatus


class LoopMetrics(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    proposals_reviewed: int
    proposals_released: int
    adoption_rate: float | None
    adoption_flag: str
    proposals_emitted: int
    detection_lead_time_hours: float | None
    correction_to_rule_hours: float | None
    repeated_issue_close_hours: float | None
    rules_released: int
    rollback_rate: float | None
    retire_rate: float | None
    notes_total: int
    notes_acted_on_rate: float | None
    research_tasks: int
    research_patch_yield: float | None

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"metric": k, "value": v} for k, v in self.model_dump().items()]
        ).astype({"metric": "string"})


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _reached(item: Any, status: LifecycleStatus) -> bool:
    return item.status == status or any(t.to_status == status for t in item.history)


def adoption_flag(rate: float | None) -> str:
    low, high = ADOPTION_BAND
    if rate is None:
        return "no reviewed proposals"
    if rate < low:
        return f"below {low:.0%}: proposals look like noise"
    if rate > high:
        return f"above {high:.0%}: review may be rubber-stamping"
    return "in band"


def _closing(rule: StrategyRule) -> tuple[str, Any] | None:
    for t in rule.history:
        if t.to_status in (S.retired, S.superseded):
            kind = "rollback" if t.is_rollback else t.to_status.value
            return kind, t.at
    return None


def _first_written(store: Any, kind: str) -> dict[str, datetime]:
    out: dict[str, datetime] = {}
    for row in store.rows(kind):
        out.setdefault(row.artifact_id, datetime.fromisoformat(row.written_at))
    return out


def _detection_lead_hours(store: Any) -> list[float]:
    """Source cluster's earliest correction → the proposal's first row in the store."""
    hours = []
    for kind, items in (
        (
            "strategy_proposal",
            [(p.proposal_id, p.insight_id) for p in store.list(StrategyProposal)],
        ),
        (
            "strategy_rule",
            [
                (r.rule_id, r.trigger.get("from_insight"))
                for r in store.list(StrategyRule)
                if r.adjustment is not None
            ],
        ),
    ):
        written = _first_written(store, kind)
        for aid, insight_id in items:
            cluster = store.get(InsightCluster, insight_id) if insight_id else None
            if cluster is not None and aid in written:
                hours.append((written[aid] - cluster.earliest).total_seconds() / 3600)
    return hours


def loop_metrics(store: Any) -> LoopMetrics:
    layer_rules = [r for r in store.list(StrategyRule) if r.adjustment is not None]
    proposals = [*store.list(StrategyProposal), *layer_rules]
    reviewed = [p for p in proposals if _reached(p, S.reviewed)]
    released = [p for p in reviewed if _reached(p, S.released)]
    adoption = _rate(len(released), len(reviewed))
    feedback = {f.id: f for f in store.list(FeedbackEntry)}
    rules = [r for r in store.list(StrategyRule) if r.released_at is not None]
    latencies = [
        (r.released_at - min(feedback[i].signed_at for i in ids)).total_seconds() / 3600
        for r in rules
        if r.lineage and (ids := [i for i in r.lineage.feedback_ids if i in feedback])
    ]
    closes = []
    for c in store.list(SourceClosure):
        cluster = store.get(InsightCluster, c.source_id)
        if c.status != ClosureStatus.fixed or cluster is None:
            continue
        times = sorted(feedback[i].signed_at for i in cluster.feedback_ids if i in feedback)
        if len(times) >= 2:
            closes.append((c.closed_at - times[1]).total_seconds() / 3600)
    ends = [(r, _closing(r)) for r in rules]
    rolled = sum(1 for _, e in ends if e and e[0] in ("rollback", "superseded"))
    retired = sum(
        1
        for r, e in ends
        if e and e[0] == "retired" and e[1] - r.released_at <= RETIRE_WINDOW
    )
    notes = store.list(Note)
    tasks = store.list(ResearchTask)
    promoted = sum(
        1
        for t in tasks
        if t.status == ResearchTaskStatus.completed and t.confirmation.get("promoted") is True
    )
    return LoopMetrics(
        proposals_reviewed=len(reviewed),
        proposals_released=len(released),
        adoption_rate=adoption,
        adoption_flag=adoption_flag(adoption),
        proposals_emitted=len(proposals),
        detection_lead_time_hours=median(lead) if (lead := _detection_lead_hours(store)) else None,
        correction_to_rule_hours=median(latencies) if latencies else None,
        repeated_issue_close_hours=median(closes) if closes else None,
        rules_released=len(rules),
        rollback_rate=_rate(rolled, len(rules)),
        retire_rate=_rate(retired, len(rules)),
        notes_total=len(notes),
        notes_acted_on_rate=_rate(sum(n.status == NoteStatus.acted_on for n in notes), len(notes)),
        research_tasks=len(tasks),
        research_patch_yield=_rate(promoted, len(tasks)),
    )
