"""What a write must satisfy to be stored (storability, signatures, lifecycle); else a refusal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from contextos_lab.schemas import ENVELOPES_BY_KIND
from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.lifecycle import check_transition
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.store.lookups import Pending, exists_any, latest
from contextos_lab.store.records import StoreRefusal
from contextos_lab.store.signing import sign_entry, signature_valid
from contextos_lab.store.upstream import upstream_ids_of

if TYPE_CHECKING:
    from contextos_lab.store.handle import StoreHandle

#: Kinds written exactly once; a later version is refused (seed 000: "signed and immutable").
IMMUTABLE_KINDS: frozenset[str] = frozenset(
    {
        "feedback_entry",
        "feedback_record",
        "decision_record",
        "scorecard",
        "replay_verdict",
        "replay_packet",
        "insight_cluster",
        "monitor_verdict",
        "source_closure",
        "review_verdict",
        "monitor_window",
    }
)
#: Kinds whose `status` is not the proposal lifecycle: the moves a new version may make
#: (a Note is acted on or dismissed once; a ResearchTask runs, then completes or is refused).
STATUS_MOVES: dict[str, dict[str, frozenset[str]]] = {
    "note": {"open": frozenset({"acted_on", "dismissed"})},
    "research_task": {
        "queued": frozenset({"running", "completed", "refused"}),
        "running": frozenset({"completed", "refused"}),
    },
}
#: Fields a reviewed artifact may still change: lifecycle and release bookkeeping only.
MUTABLE_AFTER_REVIEW: frozenset[str] = frozenset(
    {
        "status",
        "history",
        "reviewer_verdicts",
        "released_at",
        "released_by",
        "pinned_baseline",
        "effective_window",
        "lineage",
        "report",
        "confirmation",
    }
)
UNREVIEWED = frozenset({"proposed", "in_replay", "ready_for_review"})


def prepare(
    store: StoreHandle,
    conn: Any,
    item: Envelope,
    explicit_upstream: Sequence[str],
    pending: Pending,
) -> tuple[Envelope, tuple[str, ...]]:
    """The item as it will be stored (feedback and preferences signed) and its upstream ids,
    or a `StoreRefusal` naming why it may not be."""
    kind, aid = item.store_kind, item.artifact_id
    if kind not in ENVELOPES_BY_KIND:
        raise StoreRefusal(kind or type(item).__name__, aid, "not a storable envelope kind")
    check_storable(item)
    if isinstance(item, FeedbackEntry):
        item = check_feedback(store, conn, item, pending)
    elif isinstance(item, PreferenceEntry):  # signed like feedback; any annotator may judge
        if item.signature is None:
            item = sign_entry(item, store.signing_key)
        elif not signature_valid(item, store.signing_key):
            raise StoreRefusal(kind, aid, "signature does not verify with the store's key")
    current = pending.get((kind, aid)) or latest(conn, kind, aid)
    if current is not None and current.content_hash() != item.content_hash():
        if kind in IMMUTABLE_KINDS:
            raise StoreRefusal(
                kind,
                aid,
                "already stored with different content; stored entries are immutable "
                "(write a new entry that supersedes it)",
            )
        check_new_version(kind, aid, current, item)
    ups = tuple(dict.fromkeys([*upstream_ids_of(item), *explicit_upstream]))
    for up in ups:
        if not exists_any(conn, up, pending):
            raise StoreRefusal(kind, aid, f"upstream artifact {up!r} is not in the store")
    return item, ups


def check_feedback(
    store: StoreHandle, conn: Any, entry: FeedbackEntry, pending: Pending
) -> FeedbackEntry:
    """A FeedbackEntry needs an authorised signer, a stored decision record on its trace,
    a stored superseded entry if it names one, and a valid signature (signed if absent)."""
    kind, aid = entry.store_kind, entry.id
    allowed = store.authorised_overriders
    if allowed is None:
        raise StoreRefusal(
            kind,
            aid,
            "no authorised-overrider list is configured (CONTEXTOS_OVERRIDERS_FILE or "
            ".contextos/authorised_overriders.json, a JSON list of operator ids)",
        )
    if entry.signed_by not in allowed:
        raise StoreRefusal(
            kind, aid, f"signer {entry.signed_by!r} is not in the authorised-overrider list"
        )
    record = pending.get(("decision_record", entry.decision_record_id)) or latest(
        conn, "decision_record", entry.decision_record_id
    )
    if record is None:
        raise StoreRefusal(
            kind,
            aid,
            f"trace_id {entry.trace_id!r} does not resolve: decision record "
            f"{entry.decision_record_id!r} is not stored",
        )
    assert isinstance(record, DecisionRecord)
    if record.trace_id != entry.trace_id:
        raise StoreRefusal(
            kind,
            aid,
            f"trace_id {entry.trace_id!r} does not match decision record "
            f"{record.record_id} (trace {record.trace_id!r})",
        )
    if entry.supersedes is not None and not (
        pending.get((kind, entry.supersedes)) or latest(conn, kind, entry.supersedes)
    ):
        raise StoreRefusal(kind, aid, f"supersedes {entry.supersedes!r}, which is not stored")
    if entry.signature is None:
        return sign_entry(entry, store.signing_key)
    if not signature_valid(entry, store.signing_key):
        raise StoreRefusal(kind, aid, "signature does not verify with the store's key")
    return entry


def check_new_version(kind: str, aid: str, old: Envelope, new: Envelope) -> None:
    """A new version of a stored artifact must make a legal status move, recorded in its
    history, and may not change a reviewed artifact's substance."""
    if kind in STATUS_MOVES:
        before, after = str(getattr(old, "status", None)), str(getattr(new, "status", None))
        if before == after or after not in STATUS_MOVES[kind].get(before, frozenset()):
            raise StoreRefusal(kind, aid, f"a {kind} may not move from {before} to {after}")
        b, a = old.model_dump(mode="json"), new.model_dump(mode="json")
        changed = sorted(
            f for f in b.keys() | a.keys() if f not in MUTABLE_AFTER_REVIEW and b.get(f) != a.get(f)
        )
        if changed:
            raise StoreRefusal(kind, aid, f"{', '.join(changed)} may not change with status")
        return
    old_status, new_status = getattr(old, "status", None), getattr(new, "status", None)
    old_hist = tuple(getattr(old, "history", ()))
    new_hist = tuple(getattr(new, "history", ()))
    if new_hist[: len(old_hist)] != old_hist:
        raise StoreRefusal(kind, aid, "a new version may not rewrite its lifecycle history")
    state = old_status
    for move in new_hist[len(old_hist) :]:
        if move.from_status != state:
            raise StoreRefusal(kind, aid, f"history jumps from {state} to {move.from_status}")
        try:
            check_transition(
                state, move.to_status, approver_id=move.approver_id, rationale=move.rationale
            )
        except ValueError as exc:
            raise StoreRefusal(kind, aid, str(exc)) from exc
        state = move.to_status
    if state != new_status:
        raise StoreRefusal(
            kind,
            aid,
            f"status {old_status} → {new_status} without a recorded lifecycle transition",
        )
    if old_status is not None and str(old_status) not in UNREVIEWED:
        was, now = old.model_dump(mode="json"), new.model_dump(mode="json")
        changed = sorted(
            f
            for f in was.keys() | now.keys()
            if f not in MUTABLE_AFTER_REVIEW and was.get(f) != now.get(f)
        )
        if changed:
            raise StoreRefusal(
                kind,
                aid,
                f"{', '.join(changed)} changed after review (status {old_status}); a "
                "reviewed artifact's substance is frozen: propose a new one",
            )


def check_storable(item: Envelope) -> None:
    """Refuse what cannot be stored as it is: a non-finite number (stored as `Infinity`, which
    is not JSON, or as null), a lone surrogate (not UTF-8) or nesting the readers refuse."""
    try:
        json.dumps(item.model_dump(mode="json"), allow_nan=False).encode("utf-8")
        ENVELOPES_BY_KIND[item.store_kind].model_validate_json(item.canonical())
    except (ValueError, UnicodeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:200]
        raise StoreRefusal(
            item.store_kind, item.artifact_id, f"not storable as is: {reason}"
        ) from None
