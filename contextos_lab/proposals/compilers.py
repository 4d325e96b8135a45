"""The StrategyCompiler (seed 000 Step 3, seed 001): insights → typed proposals and rules.

`propose_from_insight` is one switch arm per reason class and refuses a class it does not know
(seed 000: "better to fail loudly than to emit a malformed proposal"). Arms:
- refund_window_misjudged → tighten_evidence_requirement: the seed's exact modify of
  R_REFUND_REQUIRES_WINDOW_PROOF (requires refund_window_evidence and order_lookup).
- missing_idv_check → tighten_evidence_requirement: a rule requiring `idv_check` on the key
  (added, or merged into an existing rule of that id).
- approval_threshold_too_low → raise_approval_threshold: "raising the gate" (seed 000) means
  human approval starts at a LOWER amount. The new `approval_above` is the largest multiple of
  THRESHOLD_STEP strictly below the smallest amount operators said needed approval (from the
  cluster's decision records, else `representative_field_overrides["approval_above"]`), and must
  be below the live gate.

`compile_strategy_rule` emits seed 001 StrategyRules for the other adjustment layers (planner
tool preference, retrieval, memory_recall, prompt); lint (lint.py) refuses conflicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from contextos_lab.proposals.bundle_registry import BundleRegistry
from contextos_lab.proposals.policy_bundle import PolicyBundle, apply_patch, evaluate
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight, InsightCluster
from contextos_lab.schemas.reason_classes import reason_classes
from contextos_lab.schemas.strategy import (
    Adjustment,
    AdjustmentLayer,
    ExpectedImpact,
    Patch,
    PatchOp,
    PatchTarget,
    ProposalClass,
    StrategyProposal,
    StrategyRule,
)

#: Which policy bundle governs a decision key, and the rule-id stem used in it.
BUNDLE_FOR_KEY: dict[str, str] = {
    "support.refund.execute": "POLICY_RETURNS_V4",
    "support.account.update": "POLICY_ACCOUNT_V2",
}
RULE_STEM: dict[str, str] = {
    "support.refund.execute": "R_REFUND",
    "support.account.update": "R_ACCOUNT",
}
THRESHOLD_STEP = 50.0
#: Seed 000's expected decision-change rate, used when no records are given to measure it.
DEFAULT_CHANGE_RATE = 0.012


class CompileError(ValueError):
    """The compiler cannot build a well-formed proposal or rule from this insight."""


class UnknownReasonClass(CompileError):
    def __init__(self, reason_class: str) -> None:
        self.reason_class = reason_class
        super().__init__(f"no proposal compiler for reason_class={reason_class}")


def cluster_records(store: Any, insight: InsightCluster) -> list[DecisionRecord]:
    """The decision records the cluster's corrections were made on (from the store)."""
    out = []
    for fid in insight.feedback_ids:
        fb = store.get(FeedbackEntry, fid)
        rec = store.get(DecisionRecord, fb.decision_record_id) if fb else None
        if rec is not None:
            out.append(rec)
    return out


def _bundle_id(insight: InsightCluster) -> str:
    try:
        return BUNDLE_FOR_KEY[insight.decision_key]
    except KeyError:
        raise CompileError(
            f"no policy bundle governs decision key {insight.decision_key}"
        ) from None


def _refund_window(insight: InsightCluster, live: PolicyBundle | None, _: Sequence) -> tuple:
    body = {
        "rule_id": "R_REFUND_REQUIRES_WINDOW_PROOF",
        "applies_to": {"intent": "support.refund.execute"},
        "then": {"allow": True, "requires": ["refund_window_evidence", "order_lookup"]},
        "rationale": f"Refund window must be evidenced; {insight.count} prior corrections.",
    }
    rationale = (
        f"Cluster {insight.insight_id}: {insight.count} operator overrides for misjudged refund "
        "window. Tightening evidence requirement."
    )
    return ProposalClass.tighten_evidence_requirement, PatchOp.modify, body, rationale


def _missing_idv(insight: InsightCluster, live: PolicyBundle | None, _: Sequence) -> tuple:
    key = insight.decision_key
    rule_id = f"{RULE_STEM.get(key, 'R')}_REQUIRES_IDV"
    existing = live.rule(rule_id) if live else None
    requires = sorted({"idv_check", *(existing.then.requires if existing else ())})
    body = {
        "rule_id": rule_id,
        "applies_to": {"intent": key},
        "then": {"allow": True, "requires": requires},
        "rationale": f"Identity must be verified first; {insight.count} prior corrections.",
    }
    op = PatchOp.modify if existing else PatchOp.add
    rationale = (
        f"Cluster {insight.insight_id}: {insight.count} operator overrides for {key} taken "
        "without identity verification. Requiring idv_check evidence."
    )
    return ProposalClass.tighten_evidence_requirement, op, body, rationale


def _approval_threshold(
    insight: InsightCluster, live: PolicyBundle | None, records: Sequence[DecisionRecord]
) -> tuple:
    key = insight.decision_key
    rule_id = f"{RULE_STEM.get(key, 'R')}_APPROVAL_GATE"
    amounts = [float(r.inputs["amount"]) for r in records if r.inputs.get("amount") is not None]
    hinted = insight.representative_field_overrides.get("approval_above")
    if amounts:
        threshold = (math.ceil(min(amounts) / THRESHOLD_STEP) - 1) * THRESHOLD_STEP
    elif isinstance(hinted, (int, float)):
        threshold = float(hinted)
    else:
        raise CompileError(
            f"{insight.insight_id}: no amounts to set a gate from (give the cluster's decision "
            "records, or representative_field_overrides.approval_above)"
        )
    existing = live.rule(rule_id) if live else None
    current = existing.then.approval_above if existing else None
    if current is not None and threshold >= current:
        raise CompileError(f"{rule_id}: new gate {threshold} is not below the live {current}")
    then = existing.then.model_dump(mode="json") if existing else {"allow": True, "requires": []}
    body = {
        "rule_id": rule_id,
        "applies_to": existing.applies_to if existing else {"intent": key},
        "then": {**then, "approval_above": max(threshold, 0.0)},
        "rationale": f"Human approval above {threshold:g}; {insight.count} prior corrections.",
    }
    rationale = (
        f"Cluster {insight.insight_id}: {insight.count} auto-approvals operators said needed "
        f"a human. Raising the approval gate: approval above {threshold:g}"
        + (f" (was {current:g})." if current is not None else ".")
    )
    op = PatchOp.modify if existing or live is None else PatchOp.add
    return ProposalClass.raise_approval_threshold, op, body, rationale


def propose_from_insight(
    insight: InsightCluster,
    *,
    bundles: BundleRegistry | PolicyBundle | None = None,
    records: Sequence[DecisionRecord] = (),
    runs_per_day: float | None = None,
) -> StrategyProposal:
    """A proposed StrategyProposal for a typed cluster; pinned to the live bundle when given."""
    match insight.override_reason_class:
        case "refund_window_misjudged":
            arm = _refund_window
        case "missing_idv_check":
            arm = _missing_idv
        case "approval_threshold_too_low":
            arm = _approval_threshold
        case other:
            raise UnknownReasonClass(other)
    bundle_id = _bundle_id(insight)
    if isinstance(bundles, BundleRegistry):
        live: PolicyBundle | None = bundles.active(bundle_id)
    else:
        live = bundles
    proposal_class, op, body, rationale = arm(insight, live, records)
    patch = Patch(target=PatchTarget.policy_bundle, target_id=bundle_id, op=op, body=body)
    rate = DEFAULT_CHANGE_RATE
    if live is not None and records:
        candidate = apply_patch(live, patch)
        changed = sum(evaluate(live, r) != evaluate(candidate, r) for r in records)
        rate = changed / len(records)
    days = max((insight.latest - insight.earliest).total_seconds() / 86400, 1.0)
    seed = canonical_json(
        {"insight": insight.insight_id, "class": proposal_class.value, "patch": body}
    )
    return StrategyProposal(
        proposal_id=new_id("sp", at=insight.latest, seed=seed),
        insight_id=insight.insight_id,
        proposal_class=proposal_class,
        patch=patch,
        rationale=rationale,
        expected_impact=ExpectedImpact(
            runs_affected_per_day=runs_per_day
            if runs_per_day is not None
            else insight.count / days,
            expected_decision_change_rate=rate,
        ),
        rollback_target=live.ref if live is not None else None,
    )


#: The adjustment an insight calls for, by reason class, when no layer is named.
DEFAULT_LAYER: dict[str, AdjustmentLayer] = {
    "wrong_tool": AdjustmentLayer.planner,
    "wrong_skill_routed": AdjustmentLayer.planner,
    "evidence_missing": AdjustmentLayer.retrieval,
    "over_escalation": AdjustmentLayer.memory_recall,
    "approval_threshold_too_high": AdjustmentLayer.memory_recall,
    "policy_misapplied": AdjustmentLayer.prompt,
    "agent_mistake": AdjustmentLayer.prompt,
}


def _keys(insight: InsightCluster | Insight) -> tuple[str, str | None, dict, tuple[str, ...]]:
    if isinstance(insight, InsightCluster):
        return (
            insight.decision_key,
            insight.override_reason_class,
            dict(insight.representative_field_overrides),
            insight.representative_evidence_refs,
        )
    return insight.intent, None, {}, insight.evidence_refs


def _adjustment(
    layer: AdjustmentLayer, reason: str | None, hints: dict, refs: tuple[str, ...], value: dict
) -> Adjustment:
    if layer == AdjustmentLayer.planner:
        pref = {k: value.get(k, hints.get(k)) for k in ("prefer_tool", "over")}
        if not all(pref.values()):
            raise CompileError("planner tool_preference needs prefer_tool and over (value=)")
        return Adjustment(layer=layer, type="tool_preference", value=pref)
    if layer == AdjustmentLayer.retrieval:
        inject = value.get("inject") or sorted({r.split(":", 1)[0] for r in refs})
        if not inject:
            raise CompileError("retrieval evidence_injection needs evidence kinds to inject")
        return Adjustment(layer=layer, type="evidence_injection", value={"inject": inject})
    if layer == AdjustmentLayer.memory_recall:
        recall = {"recall": "correction", "reason_class": reason, "window_days": 90}
        return Adjustment(layer=layer, type="correction_recall", value={**recall, **value})
    if layer == AdjustmentLayer.prompt:
        about = reason_classes().get(reason or "", {}).get("description", "")
        text = value.get("instruction") or (
            f"Operators corrected this decision for: {about}" if about else ""
        )
        if not text:
            raise CompileError("prompt instruction needs a reason class or value['instruction']")
        return Adjustment(layer=layer, type="instruction", value={"instruction": text})
    raise CompileError(f"no rule compiler for layer {layer.value} (policy changes are proposals)")


def compile_strategy_rule(
    insight: InsightCluster | Insight,
    layer: AdjustmentLayer | str | None = None,
    *,
    value: dict[str, Any] | None = None,
) -> StrategyRule:
    """A proposed seed-001 StrategyRule adjusting one layer, triggered by the insight."""
    key, reason, hints, refs = _keys(insight)
    if layer is None:
        if reason not in DEFAULT_LAYER:
            raise CompileError(f"name a layer: reason class {reason} has no default adjustment")
        layer = DEFAULT_LAYER[reason]
    adjustment = _adjustment(AdjustmentLayer(layer), reason, hints, refs, dict(value or {}))
    at = insight.latest if isinstance(insight, InsightCluster) else insight.last_seen
    seed = canonical_json({"insight": insight.insight_id, "adj": adjustment.model_dump()})
    return StrategyRule(
        rule_id=new_id("str", at=at, seed=seed),
        applies_to={"intent": key},
        trigger={"from_insight": insight.insight_id},
        adjustment=adjustment,
        release_gate_target=key,
    )
