"""Signed reviewer verdicts: record one, read the valid ones, and check a set before release.

A verdict counts only if it is a `ReviewVerdict` envelope on the subject whose HMAC verifies
under the store's signing key and, when the store has an authorised-overriders list, whose
reviewer is on it; the latest verdict per role wins. `check_reviews` is the one check both
release paths (policy proposals, adjustment-layer rules) run: a plain string, an unsigned or a
forged verdict is named and refused, as is a missing compliance / reliability / security role.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.review import ReviewOutcome, ReviewRole, ReviewVerdict
from contextos_lab.store.signing import (
    SigningKeyMissing,
    load_signing_key,
    sign_entry,
    signature_valid,
)


class ReviewRefused(ContextosError, ValueError):
    pass


def record_review(
    store: Any,
    subject_id: str,
    role: ReviewRole | str,
    verdict: ReviewOutcome | str,
    reviewer: str,
    rationale: str,
    *,
    at: datetime | None = None,
    key: bytes | None = None,
) -> ReviewVerdict:
    """Sign and append one verdict (upstream: the subject, which must be in the store)."""
    subject = store.find(subject_id)
    if subject is None:
        raise ReviewRefused(f"{subject_id} is not in the store")
    allowed = store.authorised_overriders
    if allowed is not None and reviewer not in allowed:
        raise ReviewRefused(f"{reviewer} is not an authorised reviewer (authorised overriders)")
    when = at or datetime.now(UTC)
    role, verdict = ReviewRole(role), ReviewOutcome(verdict)
    if getattr(subject, "status", None) in CLOSED:
        raise ReviewRefused(f"{subject_id} is {subject.status.value}: nothing left to review")
    author = author_of(subject)
    if author is not None and reviewer == author:
        raise ReviewRefused(f"{reviewer} put {subject_id} forward and may not review it")
    for other, earlier in valid_reviews(store, subject_id, key=key).items():
        if other != role.value and earlier.reviewer == reviewer:
            raise ReviewRefused(
                f"{reviewer} already signed the {other} review of {subject_id}: the "
                f"{', '.join(r.value for r in ReviewRole)} reviews need distinct reviewers"
            )
    seed = canonical_json([subject_id, role.value, reviewer, when.isoformat()])
    review = ReviewVerdict(
        review_id=new_id("rvw", at=when, seed=seed),
        subject_id=subject_id,
        role=role,
        verdict=verdict,
        reviewer=reviewer,
        rationale=rationale,
        signed_at=when,
    )
    signing = key or _store_key(store)  # required: a missing key raises SigningKeyMissing
    assert signing is not None
    review = sign_entry(review, signing)
    store.append(review)
    if verdict == ReviewOutcome.reject:
        reject_subject(store, subject, review)
    return review


#: States in which a subject takes no more reviews.
CLOSED = frozenset(
    {
        LifecycleStatus.rejected,
        LifecycleStatus.released,
        LifecycleStatus.retired,
        LifecycleStatus.superseded,
    }
)


def author_of(subject: Any) -> str | None:
    """Who put a proposal forward: the actor of its first lifecycle move (`replay --actor`),
    unless that is the kit itself."""
    history = getattr(subject, "history", ()) or ()
    actor = history[0].actor if history else None
    return None if actor in (None, "contextos-lab") else actor


def reject_subject(store: Any, subject: Any, review: ReviewVerdict) -> Any:
    """A rejecting review closes the proposal: → reviewed → rejected (seed 001's lifecycle),
    with the reviewer's rationale, so metrics count it as reviewed and not adopted."""
    moved = subject
    why = f"{review.role.value} review {review.review_id} by {review.reviewer}: {review.rationale}"
    if moved.status in (LifecycleStatus.proposed, LifecycleStatus.ready_for_review):
        moved = advance(moved, LifecycleStatus.reviewed, actor=review.reviewer, rationale=why)
    moved = advance(moved, LifecycleStatus.rejected, actor=review.reviewer, rationale=why)
    store.append(moved, upstream=(review.review_id,))
    return moved


def sign_reviews(
    store: Any,
    subject_id: str,
    reviewers: Mapping[str, str],
    verdicts: Mapping[str, str] | None = None,
    *,
    at: datetime | None = None,
    key: bytes | None = None,
) -> dict[str, ReviewVerdict]:
    """One signed verdict per role (`reviewers`: role → reviewer id; default verdict approve),
    recorded like `contextos-lab review` does: for notebooks, examples and tests."""
    out = {}
    for role, who in reviewers.items():
        verdict = (verdicts or {}).get(role, "approve")
        why = f"{role}: read the patch, the replay verdict and the lineage"
        out[role] = record_review(store, subject_id, role, verdict, who, why, at=at, key=key)
    return out


def _store_key(store: Any, required: bool = True) -> bytes | None:
    """The store's HMAC key (the one feedback is signed with), else the configured key."""
    key = getattr(store, "signing_key", None)
    if isinstance(key, bytes):
        return key
    return load_signing_key(required=required)


def stored_reviews(store: Any, subject_id: str) -> dict[str, ReviewVerdict]:
    """role → the latest stored verdict on the subject, valid or not (release checks them)."""
    out: dict[str, ReviewVerdict] = {}
    for r in sorted(store.list(ReviewVerdict), key=lambda r: r.signed_at):
        if r.subject_id == subject_id:
            out[r.role.value] = r
    return out


def valid_reviews(
    store: Any, subject_id: str, key: bytes | None = None
) -> dict[str, ReviewVerdict]:
    """role → the latest verdict on the subject whose signature verifies."""
    key = key or _store_key(store, required=False)
    out: dict[str, ReviewVerdict] = {}
    for r in sorted(store.list(ReviewVerdict), key=lambda r: r.signed_at):
        if r.subject_id == subject_id and key is not None and signature_valid(r, key):
            out[r.role.value] = r
    return out


Reviews = Mapping[str, object] | Iterable[object] | None


def _items(reviews: Reviews) -> list[tuple[str | None, object]]:
    if reviews is None:
        return []
    if isinstance(reviews, Mapping):
        return [(str(k), v) for k, v in reviews.items()]
    return [(None, v) for v in reviews]


def verify_reviews(
    reviews: Reviews,
    subject_id: str,
    *,
    key: bytes,
    authorised: frozenset[str] | None = None,
) -> tuple[dict[str, ReviewVerdict], list[str]]:
    """(role → verified verdict, every verdict refused and why). Accepts role → verdict or
    an iterable of verdicts; anything but a signed ReviewVerdict on `subject_id` is refused."""
    valid: dict[str, ReviewVerdict] = {}
    problems: list[str] = []
    for role, r in _items(reviews):
        label = role or "a"
        if not isinstance(r, ReviewVerdict):
            problems.append(
                f"{label} verdict {r!r} is a plain {type(r).__name__}, not a signed "
                "ReviewVerdict (record it with `contextos-lab review` / record_review)"
            )
            continue
        who = f"{r.role.value} review {r.review_id} by {r.reviewer}"
        if role is not None and role != r.role.value:
            problems.append(f"{who} is filed under {role!r}")
        elif r.subject_id != subject_id:
            problems.append(f"{who} is on {r.subject_id}, not {subject_id}")
        elif r.signature is None:
            problems.append(f"{who} is unsigned")
        elif not signature_valid(r, key):
            problems.append(f"{who} is forged: its signature does not verify with the store key")
        elif authorised is not None and r.reviewer not in authorised:
            problems.append(f"{who}: {r.reviewer} is not an authorised reviewer")
        elif r.role.value not in valid or valid[r.role.value].signed_at <= r.signed_at:
            valid[r.role.value] = r
    return valid, problems


def check_reviews(
    reviews: Reviews,
    subject_id: str,
    approver: str | None,
    *,
    store: Any,
    key: bytes | None = None,
    author: str | None = None,
) -> tuple[dict[str, ReviewVerdict], list[str]]:
    """The release gate's review check: verified verdicts, and every reason to refuse
    (refused verdicts, then seed 000's checklist: each role attached and approving, by
    someone other than the approver)."""
    try:
        k = key or _store_key(store)
    except SigningKeyMissing as exc:
        return {}, [f"reviews cannot be verified: {exc}"]
    assert k is not None
    authorised = getattr(store, "authorised_overriders", None)
    valid, problems = verify_reviews(reviews, subject_id, key=k, authorised=authorised)
    if authorised is None:
        problems.append(
            "no authorised list (CONTEXTOS_OVERRIDERS_FILE or .contextos/authorised_overriders"
            ".json): reviewers and approver cannot be checked"
        )
    elif approver and approver not in authorised:
        problems.append(f"approver {approver} is not on the authorised list")
    return valid, problems + review_problems(valid, approver, author=author)


def verdict_map(reviews: Mapping[str, ReviewVerdict]) -> dict[str, str]:
    """The `reviewer_verdicts` a proposal carries: role → "verdict by reviewer (review id)"."""
    return {
        role: f"{r.verdict.value} by {r.reviewer} ({r.review_id})" for role, r in reviews.items()
    }


def review_problems(
    reviews: Mapping[str, ReviewVerdict], approver: str | None, *, author: str | None = None
) -> list[str]:
    """Seed 000 Step 5 with four eyes: compliance, reliability and security verdicts attached
    and approving, by three distinct reviewers, none of them the approver or the author."""
    out = []
    roles_of: dict[str, list[str]] = {}
    for role, r in sorted(reviews.items()):
        roles_of.setdefault(r.reviewer, []).append(role)
    for who, roles in roles_of.items():
        if len(roles) > 1:
            out.append(
                f"{who} signed the {' and '.join(roles)} reviews: each role needs its own reviewer"
            )
    if author and author in roles_of:
        out.append(f"{author} put it forward and also reviewed it")
    if author and approver == author:
        out.append(f"approver {approver} put it forward: approval needs a second person")
    for role in ReviewRole:
        got = reviews.get(role.value)
        if got is None:
            out.append(f"no signed {role.value} review")
        elif got.verdict != ReviewOutcome.approve:
            out.append(f"{role.value} review by {got.reviewer} is {got.verdict.value}")
    if approver and approver in {r.reviewer for r in reviews.values()}:
        out.append(f"approver {approver} also reviewed it: approval needs a second person")
    return out
