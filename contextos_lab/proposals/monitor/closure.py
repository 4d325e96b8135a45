"""Source closure (seed 001): the pressure that started a change — an insight or a replay case
— is marked fixed, still_failing, invalid or superseded, with evidence. Closures are appended,
never edited; each carries recurrence metadata computed from the earlier closures of the same
source, so a failed attempt adds to the record instead of disappearing.

A closure is refused when its source or any evidence id is not in the store, and `fixed` is
refused without a ReplayPacket that names the pressure (its `source_pressure.source_ref` is the
source or one of the source cluster's corrections) with pinned pack, compiled-context hash,
side-effect policy and expected outcome; the packet is stored and becomes evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.monitoring import (
    ClosureStatus,
    MonitorDecision,
    MonitorVerdict,
    SourceClosure,
)
from contextos_lab.schemas.replay import ReplayPacket
from contextos_lab.schemas.strategy import ReplayStatus, ReplayVerdict, StrategyProposal

#: Monitor verdict → closure of the source. A rule retired because it governs nothing means
#: the pressure did not describe live traffic: invalid.
FROM_MONITOR: dict[MonitorDecision, ClosureStatus] = {
    MonitorDecision.keep: ClosureStatus.fixed,
    MonitorDecision.roll_back: ClosureStatus.still_failing,
    MonitorDecision.supersede: ClosureStatus.superseded,
    MonitorDecision.retire: ClosureStatus.invalid,
}


class ClosureRefused(ContextosError, ValueError):
    pass


def packet_problems(store: Any, source_id: str, packet: ReplayPacket | None) -> list[str]:
    """Why `packet` cannot back a `fixed` closure of `source_id` (empty: it can)."""
    if packet is None:
        return ["`fixed` needs a ReplayPacket naming the pressure (seed 001)"]
    cluster = store.get(InsightCluster, source_id)
    names = {source_id, *(cluster.feedback_ids if cluster is not None else ())}
    out = []
    if packet.source_pressure.source_ref not in names:
        out.append(
            f"packet {packet.packet_id} names pressure {packet.source_pressure.source_ref}, "
            f"not {source_id} or its corrections"
        )
    if not packet.pinned_context_pack.strip():
        out.append(f"packet {packet.packet_id} pins no context pack")
    if not packet.expected_outcome.decision.strip():
        out.append(f"packet {packet.packet_id} has no expected outcome")
    return out


def closures_of(store: Any, source_id: str) -> list[SourceClosure]:
    return [c for c in store.list(SourceClosure) if c.source_id == source_id]


def recurrence(prior: Sequence[SourceClosure], status: ClosureStatus, at: datetime) -> dict:
    failures = [c.closed_at for c in prior if c.status == ClosureStatus.still_failing]
    if status == ClosureStatus.still_failing:
        failures.append(at)
    return {
        "attempt": len(prior) + 1,
        "prior_closure_ids": [c.closure_id for c in prior],
        "failed_attempts": len(failures),
        "first_failed_at": min(failures).isoformat() if failures else None,
        "last_failed_at": max(failures).isoformat() if failures else None,
    }


def close_source(
    store: Any,
    source_id: str,
    status: ClosureStatus | str,
    rationale: str,
    *,
    source_kind: str | None = None,
    rule_id: str | None = None,
    evidence_ids: Sequence[str] = (),
    packet: ReplayPacket | None = None,
    at: datetime | None = None,
) -> SourceClosure:
    """Append a closure of `source_id` (which must be in the store, as must the evidence)."""
    when = at or datetime.now(UTC)
    status = ClosureStatus(status)
    found = store.find(source_id)
    problems = [] if found is not None else [f"source {source_id} is not in the store"]
    if status == ClosureStatus.fixed:
        problems += packet_problems(store, source_id, packet)
    problems += [f"evidence {e} is not in the store" for e in evidence_ids if store.find(e) is None]
    if rule_id and store.find(rule_id) is None:
        problems.append(f"rule {rule_id} is not in the store")
    if problems:
        raise ClosureRefused(
            f"refusing to close {source_id} {status.value}: " + "; ".join(problems)
        )
    if packet is not None:
        store.append(packet)
        evidence_ids = (*evidence_ids, packet.packet_id)
    kind = source_kind or (found.store_kind if found is not None else "replay_case")
    prior = sorted(closures_of(store, source_id), key=lambda c: c.closed_at)
    rec = recurrence(prior, status, when)
    seed = canonical_json({"source": source_id, "status": status.value, "attempt": rec["attempt"]})
    closure = SourceClosure(
        closure_id=new_id("scl", at=when, seed=seed),
        source_id=source_id,
        source_kind=kind,
        status=status,
        rationale=rationale,
        rule_id=rule_id,
        evidence_ids=tuple(evidence_ids),
        recurrence=rec,
        closed_at=when,
    )
    ups = [i for i in (source_id, rule_id, *evidence_ids) if i]
    store.append(closure, upstream=ups)
    return closure


def close_from_monitor(
    store: Any,
    verdict: MonitorVerdict,
    source_id: str,
    *,
    packet: ReplayPacket | None = None,
    at: datetime | None = None,
) -> SourceClosure:
    """The closure a monitor verdict implies (keep → fixed, which needs `packet`)."""
    status = FROM_MONITOR[verdict.verdict]
    return close_source(
        store,
        source_id,
        status,
        f"monitor {verdict.verdict.value}: " + "; ".join(verdict.reasons),
        rule_id=verdict.rule_id,
        evidence_ids=[verdict.monitor_verdict_id],
        packet=packet,
        at=at or verdict.decided_at,
    )


def close_failed_replay(
    store: Any, proposal: StrategyProposal, verdict: ReplayVerdict, *, at: datetime | None = None
) -> SourceClosure | None:
    """A replay_regression is a failed attempt at the insight: still_failing, counted."""
    if verdict.status != ReplayStatus.replay_regression:
        return None
    bad = [d.trace_id for d in verdict.details if d.classification == "changed_unexpected"]
    if store.find(verdict.verdict_id) is None:  # the verdict is the evidence: keep it
        store.append(verdict)
    return close_source(
        store,
        proposal.insight_id,
        ClosureStatus.still_failing,
        f"{proposal.proposal_id} regressed goldens: {', '.join(bad)}",
        evidence_ids=[verdict.verdict_id],
        at=at or verdict.computed_at,
    )
