"""ChiefOfStaff (seed 001): proactive operator notes, budgeted so the surface is not flooded.

Signals come from six sources and map to the five note kinds:
- open loops older than `open_loop_max_age`, and approvals pending past `approval_sla`
  → open_loop_aging;
- queues deeper than `max_queue_depth` → queue_backlog;
- over-escalation insights → repeated_escalation;
- scorecard metrics that fell more than `drift_tolerance` below their target → eval_target_drift;
- typed correction clusters → recurring_correction.
Notes go to the operator surface only. Budget: at most `budget` notes per operator per day.
Signals of one kind for one operator and day are aggregated into one note first; if an
operator's day still has more kinds than the budget, the weakest are folded into the last
note. Nothing is dropped: the aggregated counts add up to the signals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import pandas as pd

from contextos_lab.schemas.base import EnvelopeList, canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight, InsightCluster, InsightKind
from contextos_lab.schemas.notes import Note, NoteKind

ACTIONS: dict[NoteKind, str] = {
    NoteKind.open_loop_aging: "page the owner or close per policy",
    NoteKind.queue_backlog: "rebalance the queue or add an owner",
    NoteKind.repeated_escalation: "review the authority boundary for this decision",
    NoteKind.eval_target_drift: "open a monitor review; consider rollback",
    NoteKind.recurring_correction: "review the correction cluster for a StrategyRule",
}


@dataclass(frozen=True)
class Signal:
    kind: NoteKind
    operator: str
    at: datetime
    subject: str
    evidence_refs: tuple[str, ...] = ()
    weight: float = 1.0


@dataclass
class ChiefOfStaff:
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    budget: int = 5
    open_loop_max_age: timedelta = timedelta(hours=24)
    approval_sla: timedelta = timedelta(hours=24)
    max_queue_depth: int = 20
    drift_tolerance: float = 0.05
    default_operator: str = "ops"

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError("the note budget is at least one note per operator per day")

    def _op(self, value: object) -> str:
        return str(value) if isinstance(value, str) and value else self.default_operator

    def signals(
        self,
        *,
        open_loops: pd.DataFrame | None = None,
        approvals: pd.DataFrame | None = None,
        queues: pd.DataFrame | None = None,
        insights: Sequence[Insight] = (),
        clusters: Sequence[InsightCluster] = (),
        scorecards: pd.DataFrame | None = None,
    ) -> list[Signal]:
        """Frames: open_loops(subject, opened_at, operator, ref); approvals(gate, ref,
        requested_at, decided_at, operator); queues(queue, depth, operator); scorecards(
        decision_key, metric, target, value, operator)."""
        return [
            *self._aging(open_loops, approvals),
            *self._backlogs(queues),
            *(
                Signal(NoteKind.repeated_escalation, self.default_operator, self.now, i.pattern,
                       (i.insight_id,), float(i.occurrences))
                for i in insights
                if i.kind == InsightKind.over_escalation
            ),
            *self._drift(scorecards),
            *(
                Signal(NoteKind.recurring_correction, self.default_operator, self.now,
                       f"{c.count} {c.override_reason_class} corrections on {c.decision_key}",
                       (c.insight_id,), float(c.count))
                for c in clusters
            ),
        ]  # fmt: skip

    def _aging(
        self, open_loops: pd.DataFrame | None, approvals: pd.DataFrame | None
    ) -> list[Signal]:
        """Open loops older than `open_loop_max_age`, undecided approvals past the SLA."""
        out: list[Signal] = []
        for r in _rows(open_loops):
            age = self.now - pd.Timestamp(r["opened_at"]).to_pydatetime()
            if age > self.open_loop_max_age:
                out.append(
                    Signal(
                        NoteKind.open_loop_aging,
                        self._op(r.get("operator")),
                        self.now,
                        f"{r['subject']} open {_hours(age)}",
                        (str(r.get("ref") or r["subject"]),),
                        _hours_f(age),
                    )
                )
        for r in _rows(approvals):
            if pd.notna(r.get("decided_at")):
                continue
            age = self.now - pd.Timestamp(r["requested_at"]).to_pydatetime()
            if age > self.approval_sla:
                out.append(
                    Signal(
                        NoteKind.open_loop_aging,
                        self._op(r.get("operator")),
                        self.now,
                        f"{r['gate']} pending {_hours(age)} on {r['ref']}",
                        (f"audit:{r['ref']}",),
                        _hours_f(age),
                    )
                )
        return out

    def _backlogs(self, queues: pd.DataFrame | None) -> list[Signal]:
        return [
            Signal(
                NoteKind.queue_backlog,
                self._op(r.get("operator")),
                self.now,
                f"queue {r['queue']} at depth {int(r['depth'])}",
                (f"queue:{r['queue']}",),
                float(r["depth"]),
            )
            for r in _rows(queues)
            if int(r["depth"]) > self.max_queue_depth
        ]

    def _drift(self, scorecards: pd.DataFrame | None) -> list[Signal]:
        """Scorecard metrics below their target by more than `drift_tolerance`."""
        out: list[Signal] = []
        for r in _rows(scorecards):
            gap = float(r["target"]) - float(r["value"])
            if gap > self.drift_tolerance:
                out.append(
                    Signal(
                        NoteKind.eval_target_drift,
                        self._op(r.get("operator")),
                        self.now,
                        f"{r['metric']} on {r['decision_key']} is "
                        f"{float(r['value']):.2f} vs target {float(r['target']):.2f}",
                        (f"scorecard:{r['decision_key']}",),
                        gap * 100,
                    )
                )
        return out

    def notes(self, signals: Iterable[Signal]) -> EnvelopeList[Note]:
        """Aggregate per (operator, day, kind), then fold to the per-operator daily budget."""
        groups: dict[tuple[str, date, NoteKind], list[Signal]] = defaultdict(list)
        for s in signals:
            groups[(s.operator, s.at.date(), s.kind)].append(s)
        per_day: dict[tuple[str, date], list[Note]] = defaultdict(list)
        for (op, day, kind), items in sorted(groups.items(), key=lambda kv: _gkey(kv[0])):
            items.sort(key=lambda s: (-s.weight, s.subject))
            subject = (
                items[0].subject
                if len(items) == 1
                else f"{len(items)} {kind.value.replace('_', ' ')} signals: "
                + "; ".join(s.subject for s in items[:3])
                + ("; …" if len(items) > 3 else "")
            )
            per_day[(op, day)].append(self._note(op, day, kind, subject, items, len(items)))
        out: list[Note] = []
        for (op, day), notes in sorted(per_day.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            notes.sort(key=lambda n: (-n.aggregated_count, n.kind.value))
            if len(notes) > self.budget:
                keep, fold = notes[: self.budget - 1], notes[self.budget - 1 :]
                total = sum(n.aggregated_count for n in fold)
                refs = tuple(r for n in fold for r in n.evidence_refs)
                subject = f"{total} more signals folded: " + "; ".join(
                    f"{n.aggregated_count} {n.kind.value}" for n in fold
                )
                digest = Note(
                    note_id=new_id("cs", at=self.now, seed=canonical_json([op, str(day), refs])),
                    kind=fold[0].kind,
                    subject=subject,
                    recommended_action="triage the folded signals in one review",
                    evidence_refs=refs,
                    operator=op,
                    aggregated_count=total,
                    created_at=self.now,
                )
                notes = [*keep, digest]
            out.extend(notes)
        return EnvelopeList(out, Note)

    def _note(
        self, op: str, day: date, kind: NoteKind, subject: str, items: list[Signal], n: int
    ) -> Note:
        refs = tuple(dict.fromkeys(r for s in items for r in s.evidence_refs))
        return Note(
            note_id=new_id("cs", at=self.now, seed=canonical_json([op, str(day), kind, refs])),
            kind=kind,
            subject=subject,
            recommended_action=ACTIONS[kind],
            evidence_refs=refs,
            operator=op,
            aggregated_count=n,
            created_at=self.now,
        )


def _gkey(k: tuple[str, date, NoteKind]) -> tuple[str, date, str]:
    return k[0], k[1], k[2].value


def _rows(frame: pd.DataFrame | None) -> list[dict]:
    return [] if frame is None or frame.empty else frame.to_dict("records")


def _hours_f(age: timedelta) -> float:
    return age.total_seconds() / 3600


def _hours(age: timedelta) -> str:
    return f"> {int(_hours_f(age))}h"
