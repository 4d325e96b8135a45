"""The one proposal lifecycle shared by every proposal kind (seed 001, "Proposal lifecycle").

    proposed → reviewed → approved → released → (retired | superseded)
                      ↘ rejected

Seed 000's replay stages for a StrategyProposal (`in_replay`, `ready_for_review`) sit between
`proposed` and `reviewed` in the same machine, so there is one graph, not two. Every artifact is
frozen; `advance` returns the next version and the caller appends it to the store.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict

from contextos_lab.errors import ContextosError

if TYPE_CHECKING:
    from contextos_lab.schemas.base import Envelope


class LifecycleStatus(StrEnum):
    proposed = "proposed"
    in_replay = "in_replay"
    ready_for_review = "ready_for_review"
    reviewed = "reviewed"
    approved = "approved"
    released = "released"
    retired = "retired"
    superseded = "superseded"
    rejected = "rejected"


S = LifecycleStatus

TRANSITIONS: dict[LifecycleStatus, frozenset[LifecycleStatus]] = {
    S.proposed: frozenset({S.in_replay, S.reviewed}),
    S.in_replay: frozenset({S.ready_for_review, S.rejected}),
    S.ready_for_review: frozenset({S.reviewed}),
    S.reviewed: frozenset({S.approved, S.rejected}),
    S.approved: frozenset({S.released}),
    S.released: frozenset({S.retired, S.superseded}),
    S.retired: frozenset(),
    S.superseded: frozenset(),
    S.rejected: frozenset(),
}

TERMINAL: frozenset[LifecycleStatus] = frozenset(s for s, nxt in TRANSITIONS.items() if not nxt)
#: States that close a record and therefore need a rationale (seed 001).
NEEDS_RATIONALE: frozenset[LifecycleStatus] = frozenset({S.rejected, S.retired, S.superseded})


class IllegalTransition(ContextosError, ValueError):
    """Raised for a move the lifecycle does not allow; names both states."""

    def __init__(self, current: LifecycleStatus, target: LifecycleStatus, why: str = "") -> None:
        self.current, self.target = current, target
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "none (terminal)"
        detail = f": {why}" if why else ""
        super().__init__(
            f"illegal lifecycle transition {current.value} → {target.value}{detail} "
            f"(allowed from {current.value}: {allowed})"
        )


#: How a rollback's retirement starts its rationale. The stored transition has no other mark of
#: a rollback (its schema predates the need, and a new field would change the hash of every
#: stored rule), so the writer (`rule_lifecycle.rollback`) and the reader (`is_rollback`)
#: share this one definition.
ROLLBACK_RATIONALE = "rollback: "


class Transition(BaseModel):
    """One recorded move: who, when, why; `approver_id` is set on approval and release."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    from_status: LifecycleStatus
    to_status: LifecycleStatus
    actor: str
    at: AwareDatetime
    rationale: str | None = None
    approver_id: str | None = None

    @property
    def is_rollback(self) -> bool:
        """A retirement the kill switch made (see ROLLBACK_RATIONALE)."""
        return (self.rationale or "").startswith(ROLLBACK_RATIONALE)


def check_transition(
    current: LifecycleStatus,
    target: LifecycleStatus,
    *,
    approver_id: str | None = None,
    rationale: str | None = None,
) -> None:
    current, target = LifecycleStatus(current), LifecycleStatus(target)
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(current, target)
    if target in (S.approved, S.released) and not (approver_id and approver_id.strip()):
        raise IllegalTransition(current, target, "an approver id is required")
    if target in NEEDS_RATIONALE and not (rationale and rationale.strip()):
        raise IllegalTransition(current, target, "a rationale is required for a terminal state")


EnvT = TypeVar("EnvT", bound="Envelope")


def advance(
    artifact: EnvT,
    target: LifecycleStatus | str,
    *,
    actor: str,
    approver_id: str | None = None,
    rationale: str | None = None,
    at: datetime | None = None,
) -> EnvT:
    """Return the artifact's next version in `target`, with the move appended to `history`."""
    current = LifecycleStatus(artifact.status)  # type: ignore[attr-defined]
    target = LifecycleStatus(target)
    check_transition(current, target, approver_id=approver_id, rationale=rationale)
    move = Transition(
        from_status=current,
        to_status=target,
        actor=actor,
        at=at or datetime.now(UTC),
        rationale=rationale,
        approver_id=approver_id,
    )
    history: tuple[Any, ...] = (*tuple(getattr(artifact, "history", ())), move)
    return artifact.model_copy(update={"status": target, "history": history})
