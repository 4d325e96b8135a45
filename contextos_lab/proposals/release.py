"""Release (seed 000 Step 5) and rollback: the only way a proposal changes a live bundle.

`release_proposal` refuses, naming every unmet precondition, unless: the verdict is the
proposal's and `replay_clean` with no policy/safety delta below zero (hard-gate floors); an
approver is given; compliance, security and reliability verdicts are attached and approving;
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

from contextos_lab.proposals.bundle_registry import BundleRegistry
from contextos_lab.proposals.lint import active_rules, proposal_conflicts
from contextos_lab.proposals.policy_bundle import PolicyBundle, apply_patch
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.strategy import (
    EffectiveWindow,
    Lineage,
    PatchOp,
    PatchTarget,
    ReplayStatus,
    ReplayVerdict,
    StrategyProposal,
    StrategyRule,
)
from contextos_lab.store.lineage import lineage

S = LifecycleStatus
REQUIRED_REVIEWERS: tuple[str, ...] = ("compliance", "security", "reliability")
APPROVING: frozenset[str] = frozenset({"approve", "approved", "pass", "accept"})
FLOORS: tuple[str, ...] = ("policy", "safety")


class ReleaseRefused(RuntimeError):
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
    proposal: StrategyProposal, verdicts: Mapping[str, str], *, store: Any = None
) -> StrategyProposal:
    """A new version carrying the reviewer verdicts (the reviewer-agent envelopes' outcome)."""
    merged = {**proposal.reviewer_verdicts, **{k: str(v) for k, v in verdicts.items()}}
    if merged == proposal.reviewer_verdicts:
        return proposal
    nxt = proposal.model_copy(update={"reviewer_verdicts": merged})
    _append(store, nxt)
    return nxt


def reviewer_problems(verdicts: Mapping[str, str]) -> list[str]:
    out = []
    for name in REQUIRED_REVIEWERS:
        got = verdicts.get(name)
        if got is None:
            out.append(f"no {name} reviewer verdict attached")
        elif (got.strip().lower().split() or [""])[0] not in APPROVING:
            out.append(f"{name} reviewer verdict is {got!r}, not an approval")
    return out


def release_refusals(
    proposal: StrategyProposal,
    verdict: ReplayVerdict | None,
    approver_id: str | None,
    reviewer_verdicts: Mapping[str, str],
    live: PolicyBundle | None,
    active: list[StrategyRule],
) -> list[str]:
    """Every unmet release precondition, in checklist order (empty: releasable)."""
    out: list[str] = []
    if verdict is None:
        out.append("no replay verdict")
    else:
        if verdict.proposal_id != proposal.proposal_id:
            out.append(f"verdict {verdict.verdict_id} is for {verdict.proposal_id}")
        if verdict.status != ReplayStatus.replay_clean:
            out.append(f"replay status {verdict.status.value}")
        for floor in FLOORS:
            if getattr(verdict.scorecards_delta, floor) < 0:
                out.append(f"hard-gate regression: {floor} delta below zero")
    if not (approver_id and approver_id.strip()):
        out.append("no approver")
    out.extend(reviewer_problems(reviewer_verdicts))
    if proposal.status not in (S.ready_for_review, S.reviewed, S.approved):
        out.append(f"proposal is {proposal.status.value}, not through replay and review")
    if proposal.patch.target != PatchTarget.policy_bundle:
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
    reviewer_verdicts: Mapping[str, str] | None = None,
    *,
    store: Any,
    bundles: BundleRegistry,
    actor: str | None = None,
    at: datetime | None = None,
    supersedes: str | None = None,
) -> Release:
    """`supersedes`: an active rule this release replaces on purpose (exempt from lint, then
    marked superseded)."""
    when = _now(at)
    verdicts = {**proposal.reviewer_verdicts, **(reviewer_verdicts or {})}
    live = bundles.active(proposal.patch.target_id)
    active = [r for r in active_rules(store) if r.rule_id != supersedes]
    reasons = release_refusals(proposal, verdict, approver_id, verdicts, live, active)
    feedback_ids = lineage_feedback_ids(store, proposal.insight_id) if not reasons else ()
    if not reasons and not feedback_ids:
        reasons.append(f"no feedback lineage under {proposal.insight_id} in the store")
    if reasons:
        raise ReleaseRefused(proposal.proposal_id, reasons)
    assert verdict is not None and approver_id
    actor = actor or approver_id
    p = attach_reviews(proposal, verdicts, store=store)
    versions = []
    if p.status == S.ready_for_review:
        p = advance(p, S.reviewed, actor=actor, at=when, rationale="reviewers approve")
        versions.append(p)
    if p.status == S.reviewed:
        p = advance(p, S.approved, actor=actor, approver_id=approver_id, at=when)
        versions.append(p)
    p = advance(p, S.released, actor=actor, approver_id=approver_id, at=when)
    versions.append(p)
    new = apply_patch(live, p.patch)
    new = new.model_copy(update={"version": bundles.next_version(live.bundle_id)})
    rule = StrategyRule(
        rule_id=_rule_id(p, when),
        proposal_id=p.proposal_id,
        applies_to=dict(p.patch.body.get("applies_to", {})),
        trigger={"from_insight": p.insight_id},
        patch=p.patch,
        release_gate_target=p.patch.body.get("applies_to", {}).get("intent"),
    )
    rule_versions = [rule]
    for target in (S.reviewed, S.approved, S.released):
        rule = advance(rule, target, actor=actor, approver_id=approver_id, at=when)
        rule_versions.append(rule)
    rule = rule.model_copy(
        update={
            "released_at": when,
            "released_by": approver_id,
            "pinned_baseline": live.ref,
            "effective_window": EffectiveWindow(**{"from": when}),
            "lineage": Lineage(
                feedback_ids=feedback_ids,
                insight_id=p.insight_id,
                replay_verdict_id=verdict.verdict_id,
            ),
        }
    )
    rule_versions[-1] = rule = StrategyRule.model_validate(rule.model_dump(by_alias=True))
    store.append_many([*versions, *rule_versions])
    bundles.activate(new, actor=actor, reason=f"release {p.proposal_id}", rule_id=rule.rule_id)
    old = store.get(StrategyRule, supersedes) if supersedes else None
    if old is not None and old.active:
        supersede(old, rule.rule_id, store=store, actor=actor, at=when)
    return Release(rule=rule, proposal=p, bundle=new, baseline=live)


def _rule_id(proposal: StrategyProposal, when: datetime) -> str:
    return new_id("str", at=when, seed=f"release:{proposal.proposal_id}")


def _close_rule(
    rule: StrategyRule,
    status: LifecycleStatus,
    *,
    store: Any,
    actor: str,
    reason: str,
    at: datetime,
) -> StrategyRule:
    window = rule.effective_window
    closed = advance(rule, status, actor=actor, rationale=reason, at=at)
    if window is not None:
        closed = closed.model_copy(
            update={"effective_window": EffectiveWindow(**{"from": window.from_, "to": at})}
        )
    store.append(closed)
    return closed


def rollback(
    rule: StrategyRule,
    *,
    store: Any,
    bundles: BundleRegistry,
    actor: str,
    reason: str,
    at: datetime | None = None,
) -> tuple[StrategyRule, PolicyBundle]:
    """Kill switch: the pinned baseline (bundle or layer version) becomes live again
    (hash-equal), the rule is retired."""
    if rule.pinned_baseline is None or not rule.active:
        raise ValueError(
            f"{rule.rule_id} is {rule.status.value} with no pinned baseline to restore"
        )
    when = _now(at)
    if rule.patch is None:  # an adjustment-layer rule
        from contextos_lab.proposals.layer_release import LayerRegistry, rollback_layer

        layers = LayerRegistry.beside(bundles.root)
        restored = rollback_layer(rule, layers, actor=actor, reason=reason)
        closed = _close_rule(
            rule, S.retired, store=store, actor=actor, reason=f"rollback: {reason}", at=when
        )
        return closed, restored  # type: ignore[return-value]
    baseline = bundles.resolve(rule.pinned_baseline)
    bundles.activate(baseline, actor=actor, reason=f"rollback {rule.rule_id}", rule_id=rule.rule_id)
    closed = _close_rule(
        rule, S.retired, store=store, actor=actor, reason=f"rollback: {reason}", at=when
    )
    return closed, bundles.active(baseline.bundle_id)


def retire(
    rule: StrategyRule,
    *,
    store: Any,
    bundles: BundleRegistry,
    actor: str,
    reason: str,
    at: datetime | None = None,
) -> StrategyRule:
    """Withdraw a rule going forward: a deprecate patch (new bundle version), rule retired."""
    when = _now(at)
    if rule.patch is not None and rule.patch.target == PatchTarget.policy_bundle:
        live = bundles.active(rule.patch.target_id)
        deprecate = rule.patch.model_copy(
            update={"op": PatchOp.deprecate, "body": {"rule_id": rule.patch.body["rule_id"]}}
        )
        new = apply_patch(live, deprecate)
        new = new.model_copy(update={"version": bundles.next_version(live.bundle_id)})
        bundles.activate(new, actor=actor, reason=f"retire {rule.rule_id}", rule_id=rule.rule_id)
    elif rule.adjustment is not None:
        from contextos_lab.proposals.layer_release import LayerRegistry, retire_layer

        retire_layer(rule, LayerRegistry.beside(bundles.root), actor=actor, reason=reason)
    return _close_rule(
        rule, S.retired, store=store, actor=actor, reason=f"retire: {reason}", at=when
    )


def supersede(
    rule: StrategyRule, by: str, *, store: Any, actor: str, at: datetime | None = None
) -> StrategyRule:
    """Mark a rule replaced by a newer one (the bundle already carries the newer patch)."""
    return _close_rule(
        rule, S.superseded, store=store, actor=actor, reason=f"superseded by {by}", at=_now(at)
    )
