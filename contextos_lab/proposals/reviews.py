"""Signed reviewer verdicts: record one, and read the valid ones for a proposal or rule.

A verdict counts only if its HMAC verifies under the store's signing key and, when the store
has an authorised-overriders list, its reviewer is on it; the latest verdict per role wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.review import ReviewOutcome, ReviewRole, ReviewVerdict
from contextos_lab.store.signing import load_signing_key, sign_entry, signature_valid


class ReviewRefused(ValueError):
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
    if store.find(subject_id) is None:
        raise ReviewRefused(f"{subject_id} is not in the store")
    allowed = store.authorised_overriders
    if allowed is not None and reviewer not in allowed:
        raise ReviewRefused(f"{reviewer} is not an authorised reviewer (authorised overriders)")
    when = at or datetime.now(UTC)
    role, verdict = ReviewRole(role), ReviewOutcome(verdict)
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
    review = sign_entry(review, key or load_signing_key())
    store.append(review)
    return review


def valid_reviews(
    store: Any, subject_id: str, key: bytes | None = None
) -> dict[str, ReviewVerdict]:
    """role → the latest verdict on the subject whose signature verifies."""
    key = key or load_signing_key(required=False)
    out: dict[str, ReviewVerdict] = {}
    for r in sorted(store.list(ReviewVerdict), key=lambda r: r.signed_at):
        if r.subject_id == subject_id and key is not None and signature_valid(r, key):
            out[r.role.value] = r
    return out


def verdict_map(reviews: Mapping[str, ReviewVerdict]) -> dict[str, str]:
    """The `reviewer_verdicts` a proposal carries: role → "verdict by reviewer (review id)"."""
    return {
        role: f"{r.verdict.value} by {r.reviewer} ({r.review_id})" for role, r in reviews.items()
    }


def review_problems(reviews: Mapping[str, ReviewVerdict], approver: str | None) -> list[str]:
    """Seed 000 Step 5: compliance, reliability and security verdicts attached and approving;
    the approver is not one of the reviewers (no one approves their own review)."""
    out = []
    for role in ReviewRole:
        got = reviews.get(role.value)
        if got is None:
            out.append(f"no signed {role.value} review")
        elif got.verdict != ReviewOutcome.approve:
            out.append(f"{role.value} review by {got.reviewer} is {got.verdict.value}")
    if approver and approver in {r.reviewer for r in reviews.values()}:
        out.append(f"approver {approver} also reviewed it: approval needs a second person")
    return out
