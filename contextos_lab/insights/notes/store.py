"""Chief-of-Staff notes and ResearchQueue tasks, kept in the experience store.

The per-operator per-day note budget is read from the store (notes already written for that
operator and day count against it), so it holds across processes and runs. A note moves once:
open → acted_on or dismissed. A research task moves queued → completed (with whether the
operator promoted its knowledge patch) or refused.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from contextos_lab.insights.notes.chief_of_staff import ChiefOfStaff
from contextos_lab.insights.notes.research_queue import research_candidates
from contextos_lab.schemas.insight import Insight, InsightCluster
from contextos_lab.schemas.notes import Note, NoteStatus
from contextos_lab.schemas.research import ResearchTask, ResearchTaskStatus


def used_budget(store: Any, operator: str, day: Any) -> int:
    return sum(1 for n in store.list(Note) if n.operator == operator and n.created_at.date() == day)


def open_clusters(store: Any) -> list[InsightCluster]:
    """Clusters still recurring: not closed `fixed`, or corrected again after that closure
    (a fixed cluster is not a recurring correction until it recurs)."""
    from contextos_lab.schemas.monitoring import ClosureStatus, SourceClosure

    fixed: dict[str, datetime] = {}
    for c in sorted(store.list(SourceClosure), key=lambda c: c.closed_at):
        if c.status == ClosureStatus.fixed:
            fixed[c.source_id] = c.closed_at
        else:
            fixed.pop(c.source_id, None)
    return [
        c
        for c in store.list(InsightCluster)
        if c.insight_id not in fixed or c.latest > fixed[c.insight_id]
    ]


def emit_notes(
    store: Any, operator: str, *, budget: int = 5, now: datetime | None = None
) -> tuple[list[Note], int]:
    """Notes from the stored insights and clusters, within what is left of today's budget.
    Returns (new notes stored, signals left for another day because the budget is spent)."""
    now = now or datetime.now(UTC)
    cos = ChiefOfStaff(now=now, budget=budget, default_operator=operator)
    signals = cos.signals(insights=list(store.list(Insight)), clusters=open_clusters(store))
    signals = [s for s in signals if s.operator == operator]
    known = {n.note_id for n in store.list(Note)}
    left = budget - used_budget(store, operator, now.date())
    if left <= 0:
        return [], len(signals)
    notes = [
        n
        for n in ChiefOfStaff(now=now, budget=left, default_operator=operator).notes(signals)
        if n.note_id not in known
    ]
    ups = {n.note_id: [r for r in n.evidence_refs if store.find(r) is not None] for n in notes}
    if notes:
        store.append_many(notes, upstream=ups)
    return notes, 0


def move_note(store: Any, note_id: str, status: NoteStatus | str) -> Note:
    note = store.get(Note, note_id)
    if note is None:
        raise KeyError(f"no Note {note_id}")
    moved = note.model_copy(update={"status": NoteStatus(status)})
    store.append(moved)
    return moved


def queue_research(store: Any, *, max_external_calls: int = 0) -> list[ResearchTask]:
    """ResearchTasks for the stored knowledge-gap insights (routing class evidence_gap)."""
    known = {t.research_task_id for t in store.list(ResearchTask)}
    tasks = [
        c.task
        for c in research_candidates(
            list(store.list(Insight)), max_external_calls=max_external_calls
        )
        if c.task.research_task_id not in known
    ]
    if tasks:
        store.append_many(tasks)
    return tasks


def complete_research(
    store: Any, task_id: str, *, promoted: bool, patch_ref: str | None, by: str
) -> ResearchTask:
    """The operator's outcome: a knowledge patch promoted (or not); `research patch yield`."""
    task = store.get(ResearchTask, task_id)
    if task is None:
        raise KeyError(f"no ResearchTask {task_id}")
    confirmation = {
        **task.confirmation,
        "promoted": promoted,
        "knowledge_patch": patch_ref,
        "decided_by": by,
        "decided_at": datetime.now(UTC).isoformat(),
    }
    done = task.model_copy(
        update={"status": ResearchTaskStatus.completed, "confirmation": confirmation}
    )
    store.append(done)
    return done


def note_counts(store: Any) -> Counter[str]:
    return Counter(n.status.value for n in store.list(Note))
