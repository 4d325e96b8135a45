"""Release, rollback and retire for adjustment-layer StrategyRules (seed 001's six layers).

A layer's live configuration is the set of released adjustments on it, kept like policy
bundles: immutable version files plus an activation log, under `<root>/<layer>/`. Release
lints the rule against active rules, pins the live layer version as the baseline, writes the
next version with the rule added and activates it; rollback re-activates the pinned version
(the same bytes, the same content hash); retire writes a version without the rule.
Why not the bundle registry itself: a layer version holds adjustments, not policy rules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from contextos_lab.proposals.release.layer_registry import LayerRegistry, LayerState
from contextos_lab.proposals.release.lint import active_rules, rule_conflicts
from contextos_lab.proposals.release.reviews import Reviews, author_of, check_reviews, verdict_map
from contextos_lab.proposals.release.rule_lifecycle import stamp_release
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.review import ReviewVerdict
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyRule

S = LifecycleStatus


def _entry(rule: StrategyRule) -> dict[str, Any]:
    assert rule.adjustment is not None
    return {
        "applies_to": rule.applies_to,
        "type": rule.adjustment.type,
        "value": rule.adjustment.value,
    }


def layer_refusals(
    rule: StrategyRule,
    approver_id: str | None,
    review_reasons: list[str],
    active: list[StrategyRule],
    verdict: ReplayVerdict | None = None,
) -> list[str]:
    """Every reason not to release (seed 000's checks, for a layer rule)."""
    from contextos_lab.proposals.release.checklist import verdict_refusals

    missing = f"no replay verdict (run `contextos-lab replay {rule.rule_id}`)"
    out = verdict_refusals(verdict, rule.rule_id, missing)
    if rule.adjustment is None:
        out.append(f"{rule.rule_id} has no layer adjustment")
    if rule.status != S.proposed:
        out.append(f"rule is {rule.status.value}, not proposed")
    if not (approver_id and approver_id.strip()):
        out.append("no approver")
    out.extend(review_reasons)
    out.extend(f"lint: {c}" for c in rule_conflicts(rule, active))
    return out


def _stale_or_unsourced(
    rule: StrategyRule,
    verdict: ReplayVerdict | None,
    layers: LayerRegistry,
    feedback_ids: tuple[str, ...],
    *,
    refused: bool,
) -> list[str]:
    """A replay older than the live layer; no feedback lineage (named only when nothing else
    refused the release)."""
    reasons = []
    if verdict is not None and rule.adjustment is not None:
        moved = layers.activated_since(rule.adjustment.layer.value, verdict.computed_at)
        if moved:
            reasons.append(
                f"the layer changed since the replay ({moved[-1]} is live): replay it again"
            )
    if not refused and not reasons and not feedback_ids:
        reasons.append(f"no feedback lineage under {rule.trigger.get('from_insight')}")
    return reasons


def _advanced(
    rule: StrategyRule, valid: dict[str, ReviewVerdict], approver_id: str, when: datetime
) -> list[StrategyRule]:
    """The rule as proposed, then reviewed (naming the reviews), approved and released."""
    versions = [rule]
    reviewed = ", ".join(f"{k}={v}" for k, v in sorted(verdict_map(valid).items()))
    for target, why in (
        (S.reviewed, f"reviewers approve: {reviewed}"),
        (S.approved, None),
        (S.released, None),
    ):
        rule = advance(
            rule, target, actor=approver_id, approver_id=approver_id, at=when, rationale=why
        )
        versions.append(rule)
    return versions


def release_layer_rule(
    rule: StrategyRule,
    approver_id: str | None,
    reviews: Reviews = None,
    *,
    verdict: ReplayVerdict | None,
    feedback_ids: tuple[str, ...],
    store: Any,
    layers: LayerRegistry,
    key: bytes | None = None,
    at: datetime | None = None,
    supersedes: str | None = None,
) -> tuple[StrategyRule, LayerState, LayerState]:
    """(released rule, new live layer version, pinned baseline); refuses naming every reason.
    `verdict`: the rule's clean golden replay (`replay.layers.run_layer_replay`), on the live
    layer version; `reviews`: signed ReviewVerdict envelopes, checked like a proposal's."""
    from contextos_lab.proposals.release.release import ReleaseRefused, supersede

    when = at or datetime.now(UTC)
    valid, review_reasons = check_reviews(
        reviews, rule.rule_id, approver_id, store=store, key=key, author=author_of(rule)
    )
    active = [r for r in active_rules(store) if r.rule_id != supersedes]
    reasons = layer_refusals(rule, approver_id, review_reasons, active, verdict)
    reasons += _stale_or_unsourced(rule, verdict, layers, feedback_ids, refused=bool(reasons))
    if reasons:
        raise ReleaseRefused(rule.rule_id, reasons)
    assert rule.adjustment is not None and approver_id and verdict is not None
    layer = rule.adjustment.layer.value
    baseline = layers.active(layer)
    rules = {k: v for k, v in baseline.rules.items() if k != supersedes}
    new = LayerState(layer, layers.next_version(layer), {**rules, rule.rule_id: _entry(rule)})
    versions = _advanced(rule, valid, approver_id, when)
    versions[-1] = stamp_release(
        versions[-1],
        when=when,
        approver_id=approver_id,
        baseline_ref=baseline.ref,
        feedback_ids=feedback_ids,
        insight_id=rule.trigger["from_insight"],
        verdict_id=verdict.verdict_id,
    )
    store.append_many([v for v in valid.values() if store.find(v.review_id) is None])
    store.append_many(versions)
    layers.publish(new, approver_id, f"release {rule.rule_id}")
    old = store.get(StrategyRule, supersedes) if supersedes else None
    if old is not None and old.active:
        supersede(old, rule.rule_id, store=store, actor=approver_id, at=when)
    return versions[-1], new, baseline
