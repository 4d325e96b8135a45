"""A rule's life from release on: stamp it released, roll it back to its pinned baseline,
retire it, or mark it superseded.

Policy-bundle rules restore or deprecate in the bundle registry; adjustment-layer rules in the
layer registry beside it. Each closes the rule's effective window and appends the new version.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from contextos_lab.proposals.policy.bundle import PolicyBundle, apply_patch
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.schemas.lifecycle import ROLLBACK_RATIONALE, LifecycleStatus, advance
from contextos_lab.schemas.strategy import (
    EffectiveWindow,
    Lineage,
    PatchOp,
    PatchTarget,
    StrategyRule,
)

S = LifecycleStatus


def _now(at: datetime | None) -> datetime:
    return at or datetime.now(UTC)


def stamp_release(
    rule: StrategyRule,
    *,
    when: datetime,
    approver_id: str,
    baseline_ref: str,
    feedback_ids: tuple[str, ...],
    insight_id: str,
    verdict_id: str,
) -> StrategyRule:
    """The released version of `rule`: who released it when, the baseline a rollback restores,
    its open effective window and its lineage. One stamp for bundle and layer releases alike,
    so rollback and audit read the same fields whichever registry the rule went live in;
    re-validated because `model_copy` skips validation."""
    stamped = rule.model_copy(
        update={
            "released_at": when,
            "released_by": approver_id,
            "pinned_baseline": baseline_ref,
            "effective_window": EffectiveWindow(**{"from": when}),
            "lineage": Lineage(
                feedback_ids=feedback_ids, insight_id=insight_id, replay_verdict_id=verdict_id
            ),
        }
    )
    return StrategyRule.model_validate(stamped.model_dump(by_alias=True))


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
        from contextos_lab.proposals.release.layer_registry import LayerRegistry, rollback_layer

        layers = LayerRegistry.beside(bundles.root)
        restored = rollback_layer(rule, layers, actor=actor, reason=reason)
        closed = _close_rule(
            rule, S.retired, store=store, actor=actor, reason=ROLLBACK_RATIONALE + reason, at=when
        )
        return closed, restored  # type: ignore[return-value]
    baseline = bundles.resolve(rule.pinned_baseline)
    bundles.activate(baseline, actor=actor, reason=f"rollback {rule.rule_id}", rule_id=rule.rule_id)
    closed = _close_rule(
        rule, S.retired, store=store, actor=actor, reason=ROLLBACK_RATIONALE + reason, at=when
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
        from contextos_lab.proposals.release.layer_registry import LayerRegistry, retire_layer

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
