"""ResearchQueue (seed 001): knowledge-gap insights become ResearchTask *candidates*.

A candidate is not a file. Per the design card a ResearchTask file is emitted only after its
pattern, discovered on the search split, is confirmed on the held-out split (the gate's job).
So each candidate carries the pattern's spec (recountable with `runs.insights.measure`), the
search-split counts and the split declaration. Execution is budgeted: asking for more external
calls than `scope.max_external_calls` is refused, and the refusal is recorded as a security
event (seed 001: "refused at execution; emits a security event").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from contextos_lab.errors import ContextosError
from contextos_lab.insights.routing import route
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight
from contextos_lab.schemas.research import ResearchScope, ResearchTask, ResearchTaskStatus


class ResearchCandidate(BaseModel):
    """A queued task plus what the gate needs to confirm its pattern on held-out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: ResearchTask
    pattern_spec: dict[str, Any]
    search_counts: dict[str, Any]
    split: dict[str, Any]
    routing_rule: str


class SecurityEvent(BaseModel):
    """A refused out-of-scope execution; appended to the queue's security log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event: Literal["research_scope_exceeded"] = "research_scope_exceeded"
    research_task_id: str
    trigger_insight_id: str
    domain: str
    max_external_calls: int
    calls_requested: int
    at: datetime
    detail: str = ""


class ScopeExceeded(ContextosError, PermissionError):
    def __init__(self, event: SecurityEvent) -> None:
        self.event = event
        super().__init__(
            f"research task {event.research_task_id} asked for {event.calls_requested} external "
            f"calls; its scope allows {event.max_external_calls}"
        )


class CallBudget:
    """Handed to a research runner; every external call must be charged here first."""

    def __init__(self, queue: ResearchQueue, task: ResearchTask) -> None:
        self.queue, self.task, self.used = queue, task, 0

    def charge(self, n: int = 1) -> None:
        if self.used + n > self.task.scope.max_external_calls:
            raise ScopeExceeded(self.queue.refuse(self.task, self.used + n, "during execution"))
        self.used += n


def evidence_subject(insight: Insight, key: dict) -> str:
    """What evidence the question asks a source for: the missing evidence kind(s), never the
    decision key (that is where the evidence is needed, named after `for`)."""
    if key.get("ref"):
        return str(key["ref"]).split(":", 1)[0]
    kinds = insight.support.get("evidence_missing") or ()
    if kinds:
        return " and ".join(str(k) for k in kinds)
    reason = key.get("override_reason_class")
    return f"the evidence {reason} corrections lacked" if reason else "the missing evidence"


def research_candidates(
    insights: Sequence[Insight], *, max_external_calls: int = 0
) -> list[ResearchCandidate]:
    """One candidate per knowledge-gap insight (routing class evidence_gap)."""
    out = []
    for insight in insights:
        routing = route(insight)
        if not routing.knowledge_gap:
            continue
        key = insight.support.get("key") or {}
        subject = evidence_subject(insight, key)
        task = ResearchTask(
            research_task_id=new_id("rq", at=insight.last_seen, seed=insight.insight_id),
            trigger_insight_id=insight.insight_id,
            question=f"What source would supply {subject} for {insight.intent}, so decisions "
            f"stop being made without it? ({insight.pattern})",
            scope=ResearchScope(domain=insight.intent, max_external_calls=max_external_calls),
            created_at=insight.last_seen,
        )
        counts = {
            k: insight.support.get(k)
            for k in (
                "hits_in",
                "n_in",
                "hits_out",
                "n_out",
                "rate",
                "baseline_rate",
                "p_value",
                "q_value",
                "standing",
                "family",
            )
        }
        out.append(
            ResearchCandidate(
                task=task,
                pattern_spec=insight.support.get("spec") or {},
                search_counts=counts,
                split=insight.support.get("split") or {},
                routing_rule=routing.rule,
            )
        )
    return out


class ResearchQueue:
    """Holds candidates; executes within scope; refuses and records beyond it."""

    def __init__(self, security_log: Path | None = None) -> None:
        self.security_log = security_log
        self.candidates: list[ResearchCandidate] = []
        self.security_events: list[SecurityEvent] = []

    def enqueue(self, candidates: Sequence[ResearchCandidate]) -> None:
        known = {c.task.research_task_id for c in self.candidates}
        self.candidates.extend(c for c in candidates if c.task.research_task_id not in known)

    def refuse(self, task: ResearchTask, calls_requested: int, detail: str = "") -> SecurityEvent:
        event = SecurityEvent(
            research_task_id=task.research_task_id,
            trigger_insight_id=task.trigger_insight_id,
            domain=task.scope.domain,
            max_external_calls=task.scope.max_external_calls,
            calls_requested=calls_requested,
            at=datetime.now(UTC),
            detail=detail,
        )
        self.security_events.append(event)
        if self.security_log is not None:
            self.security_log.parent.mkdir(parents=True, exist_ok=True)
            with self.security_log.open("a", encoding="utf-8") as fh:
                fh.write(canonical_json(event.model_dump(mode="json")) + "\n")
        return event

    def execute(
        self,
        task: ResearchTask,
        calls_requested: int,
        runner: Callable[[ResearchTask, CallBudget], Any] | None = None,
    ) -> tuple[ResearchTask, Any]:
        """Run `runner` under the task's call budget. A declared request beyond scope is refused
        before anything runs; a runner that overspends is stopped at the call that overspends.
        Either way the task comes back `refused` and a security event is recorded."""
        if calls_requested > task.scope.max_external_calls:
            self.refuse(task, calls_requested, "declared request exceeds scope")
            return task.model_copy(update={"status": ResearchTaskStatus.refused}), None
        budget = CallBudget(self, task)
        try:
            result = runner(task, budget) if runner is not None else None
        except ScopeExceeded:
            return task.model_copy(update={"status": ResearchTaskStatus.refused}), None
        return task.model_copy(update={"status": ResearchTaskStatus.completed}), result
