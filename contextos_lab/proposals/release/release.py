"""Release (seed 000 Step 5) and rollback: the only way a proposal changes a live bundle.

`release_proposal` refuses, naming every unmet precondition, unless: seed 000's checklist
rows before release hold (feedback signed with expected outcomes, insight with evidence and
key, typed proposal with rollback target); the verdict is the proposal's and `replay_clean`
with no policy/safety delta below zero (hard-gate floors); an approver is given; signed
compliance, security and reliability `ReviewVerdict`s approve it (`reviews.check_reviews`: a
plain string, an unsigned or a forged verdict is refused, and the approver is not a reviewer);
the live bundle is still the one the replay pinned; and lint finds no conflict with active
rules. It then walks the proposal through the lifecycle (each version appended), writes the
patched bundle version, and records a released StrategyRule with approver, effective window,
pinned baseline and lineage read from the store (feedback ids under the insight, insight id,
verdict id). `rollback` re-activates the pinned baseline file (same content hash) and retires
the rule with the rationale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from contextos_lab.errors import ContextosError
from contextos_lab.proposals.policy.bundle import PolicyBundle, apply_patch
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.release.checklist import release_checklist, verdict_refusals
from contextos_lab.proposals.release.lint import active_rules, proposal_conflicts
from contextos_lab.proposals.release.reviews import Reviews, author_of, check_reviews, verdict_map
from contextos_lab.proposals.release.rule_lifecycle import (
    retire,
    rollback,
    stamp_release,
    supersede,
)
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.review import ReviewVerdict
from contextos_lab.schemas.strategy import (
    PatchTarget,
    ReplayStatus,
    ReplayVerdict,
    StrategyProposal,
    StrategyRule,
)
from contextos_lab.store.lineage import lineage

S = LifecycleStatus
#: Checklist rows that must be `checked` before release (the last row is the release itself).
PRE_RELEASE_ROWS = ("Feedback", "Insight", "Proposal")


class ReleaseRefused(ContextosError, RuntimeError):
    def __init__(self, subject: str, reasons: list[str]) -> None:
        self.subject, self.reasons = subject, reasons
        super().__init__(f"refusing to release {subject}: " + "; ".join(reasons))


@dataclass(frozen=True)
class Release:
    rule: StrategyRule
    proposal: StrategyProposal
    bundle: PolicyBundle
    baseline: PolicyBundle


def _now(at: datetime | None) -> datetime:
    return at or datetime.now(UTC)


def _append(store: Any, item: Any) -> None:
    if store is not None:
        store.append(item)


def send_to_replay(
    proposal: StrategyProposal, *, actor: str, store: Any = None, at: datetime | None = None
) -> StrategyProposal:
    nxt = advance(proposal, S.in_replay, actor=actor, at=_now(at))
    _append(store, nxt)
    return nxt


def record_replay(
    proposal: StrategyProposal,
    verdict: ReplayVerdict,
    *,
    actor: str,
    store: Any = None,
    at: datetime | None = None,
) -> StrategyProposal:
    """Clean → ready_for_review. Anything else stays in_replay: a human reads the diff first."""
    if verdict.status != ReplayStatus.replay_clean:
        return proposal
    nxt = advance(
        proposal, S.ready_for_review, actor=actor, at=_now(at), rationale=verdict.verdict_id
    )
    _append(store, nxt)
    return nxt


def attach_reviews(
    proposal: StrategyProposal, reviews: Mapping[str, ReviewVerdict], *, store: Any = None
) -> StrategyProposal:
    """A new version whose `reviewer_verdicts` summarise the verified review envelopes
    (role → "approve by ana (rvw_…)"); the envelopes themselves are what release checks."""
    merged = {**proposal.reviewer_verdicts, **verdict_map(reviews)}
    if merged == proposal.reviewer_verdicts:
        return proposal
    nxt = proposal.model_copy(update={"reviewer_verdicts": merged})
    _append(store, nxt)
    return nxt


def checklist_refusals(store: Any, proposal: StrategyProposal) -> list[str]:
    """Seed 000's checklist rows before replay (feedback, insight, proposal) that are missing."""
    sheet = release_checklist(store, proposal)
    gaps = sheet[sheet["check"].isin(PRE_RELEASE_ROWS) & (sheet["status"] == "missing")]
    return [f"checklist {r.check}: {r.reason}" for r in gaps.itertuples()]


def release_refusals(
    proposal: StrategyProposal,
    verdict: ReplayVerdict | None,
    approver_id: str | None,
    review_reasons: list[str],
    live: PolicyBundle | None,
    active: list[StrategyRule],
) -> list[str]:
    """Every unmet release precondition, in checklist order (empty: releasable)."""
    out = verdict_refusals(verdict, proposal.proposal_id, "no replay verdict")
    if not (approver_id and approver_id.strip()):
        out.append("no approver")
    out.extend(review_reasons)
    if proposal.status not in (S.ready_for_review, S.reviewed, S.approved):
        out.append(f"proposal is {proposal.status.value}, not through replay and review")
    if proposal.patch.target not in (PatchTarget.policy_bundle, PatchTarget.intent_rubric):
        out.append(f"release of {proposal.patch.target.value} patches is not supported here")
    elif live is not None:
        if proposal.rollback_target and live.ref != proposal.rollback_target:
            out.append(f"live bundle is {live.ref}, replay pinned {proposal.rollback_target}")
        out.extend(f"lint: {c}" for c in proposal_conflicts(proposal, live, active))
    return out


def lineage_feedback_ids(store: Any, insight_id: str) -> tuple[str, ...]:
    """Feedback ids directly under the insight in the store's recorded links (not its fields)."""
    found = store.find(insight_id)
    if isinstance(found, Insight) and isinstance(found.support.get("cluster_id"), str):
        insight_id = found.support["cluster_id"]
    node = lineage(store, insight_id)
    return tuple(n.artifact_id for n in node.upstream if n.kind == "feedback_entry")


def release_proposal(
    proposal: StrategyProposal,
    verdict: ReplayVerdict | None,
    approver_id: str | None,
    reviews: Reviews = None,
    *,
    store: Any,
    bundles: BundleRegistry,
    key: bytes | None = None,
    actor: str | None = None,
    at: datetime | None = None,
    supersedes: str | None = None,
) -> Release:
    """`reviews`: the signed ReviewVerdict envelopes (role → verdict, or an iterable), checked
    with `key` (default: the store's signing key). `supersedes`: an active rule this release
    replaces on purpose (exempt from lint, then marked superseded)."""
    when = _now(at)
    valid, review_reasons = check_reviews(
        reviews, proposal.proposal_id, approver_id, store=store, key=key, author=author_of(proposal)
    )
    live = bundles.active(proposal.patch.target_id)
    active = [r for r in active_rules(store) if r.rule_id != supersedes]
    reasons = checklist_refusals(store, proposal)
    reasons += release_refusals(proposal, verdict, approver_id, review_reasons, live, active)
    feedback_ids = lineage_feedback_ids(store, proposal.insight_id) if not reasons else ()
    if not reasons and not feedback_ids:
        reasons.append(f"no feedback lineage under {proposal.insight_id} in the store")
    if reasons:
        raise ReleaseRefused(proposal.proposal_id, reasons)
    assert verdict is not None and approver_id
    actor = actor or approver_id
    store.append_many([r for r in valid.values() if store.find(r.review_id) is None])
    versions = _to_released(attach_reviews(proposal, valid, store=store), actor, approver_id, when)
    p = versions[-1]
    new = apply_patch(live, p.patch)
    new = new.model_copy(update={"version": bundles.next_version(live.bundle_id)})
    rule_versions = _rule_versions(p, actor, approver_id, when)
    rule_versions[-1] = rule = stamp_release(
        rule_versions[-1],
        when=when,
        approver_id=approver_id,
        baseline_ref=live.ref,
        feedback_ids=feedback_ids,
        insight_id=p.insight_id,
        verdict_id=verdict.verdict_id,
    )
    store.append_many([*versions, *rule_versions])
    bundles.activate(new, actor=actor, reason=f"release {p.proposal_id}", rule_id=rule.rule_id)
    old = store.get(StrategyRule, supersedes) if supersedes else None
    if old is not None and old.active:
        supersede(old, rule.rule_id, store=store, actor=actor, at=when)
    return Release(rule=rule, proposal=p, bundle=new, baseline=live)


def _to_released(
    p: StrategyProposal, actor: str, approver_id: str, when: datetime
) -> list[StrategyProposal]:
    """Each version the proposal passes through on its way to released (reviewed and approved
    unless it already is), the released one last."""
    versions = []
    if p.status == S.ready_for_review:
        p = advance(p, S.reviewed, actor=actor, at=when, rationale="reviewers approve")
        versions.append(p)
    if p.status == S.reviewed:
        p = advance(p, S.approved, actor=actor, approver_id=approver_id, at=when)
        versions.append(p)
    return [*versions, advance(p, S.released, actor=actor, approver_id=approver_id, at=when)]


def _rule_versions(
    p: StrategyProposal, actor: str, approver_id: str, when: datetime
) -> list[StrategyRule]:
    """The released proposal's rule, proposed then reviewed, approved and released."""
    rule = StrategyRule(
        rule_id=_rule_id(p, when),
        proposal_id=p.proposal_id,
        applies_to=dict(p.patch.body.get("applies_to", {})),
        trigger={"from_insight": p.insight_id},
        patch=p.patch,
        release_gate_target=p.patch.body.get("applies_to", {}).get("intent"),
    )
    versions = [rule]
    for target in (S.reviewed, S.approved, S.released):
        rule = advance(rule, target, actor=actor, approver_id=approver_id, at=when)
        versions.append(rule)
    return versions


def _rule_id(proposal: StrategyProposal, when: datetime) -> str:
    return new_id("str", at=when, seed=f"release:{proposal.proposal_id}")


__all__ = [
    "Release",
    "ReleaseRefused",
    "attach_reviews",
    "record_replay",
    "release_proposal",
    "retire",
    "rollback",
    "send_to_replay",
    "supersede",
]
