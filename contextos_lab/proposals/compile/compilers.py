"""The StrategyCompiler (seed 000 Step 3, seed 001): insights → typed proposals and rules.

Which change an insight compiles to is the project's data, not code here: the row of
`harness/compilers.yaml` for the insight's reason class picks a shape (`compile.table`) or a
Python entry point (`module:function`, resolved inside the project folder). A reason class with
no row is refused loudly (seed 000: "better to fail loudly than to emit a malformed proposal").
The decision key's policy bundle and rule-id stem come from the project's `decision_keys`.

- `propose_from_insight`: a StrategyProposal patching the key's policy bundle (policy shapes);
- `compile_strategy_rule`: a seed-001 StrategyRule on one of the six adjustment layers;
- `compile_insight`: whichever of the two the project's row calls for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextos_lab.domain.active import active_project
from contextos_lab.domain.config import CompilerSpec, DomainConfig, ProjectError
from contextos_lab.proposals.compile.entry import call_entry
from contextos_lab.proposals.compile.table import (
    POLICY_SHAPES,
    Arm,
    CompileError,
    adjustment,
)
from contextos_lab.proposals.policy.bundle import PolicyBundle, apply_patch, evaluate
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight, InsightCluster
from contextos_lab.schemas.reason_classes import reason_classes
from contextos_lab.schemas.strategy import (
    AdjustmentLayer,
    ExpectedImpact,
    Patch,
    PatchOp,
    PatchTarget,
    ProposalClass,
    StrategyProposal,
    StrategyRule,
)

__all__ = [
    "CompileError",
    "UnknownReasonClass",
    "cluster_records",
    "compile_insight",
    "compile_strategy_rule",
    "propose_from_insight",
]

#: Seed 000's expected decision-change rate, used when no records are given to measure it.
DEFAULT_CHANGE_RATE = 0.012
#: Domain-free defaults for the core registry's classes when the project's table has no row.
DEFAULT_LAYER: dict[str, AdjustmentLayer] = {
    "wrong_tool": AdjustmentLayer.planner,
    "wrong_skill_routed": AdjustmentLayer.planner,
    "evidence_missing": AdjustmentLayer.retrieval,
    "over_escalation": AdjustmentLayer.memory_recall,
    "policy_misapplied": AdjustmentLayer.prompt,
    "agent_mistake": AdjustmentLayer.prompt,
    "confusing_output": AdjustmentLayer.prompt,
    "expensive_run": AdjustmentLayer.budget_allocation,
}


class UnknownReasonClass(CompileError):
    def __init__(self, reason_class: str, where: str = "") -> None:
        self.reason_class = reason_class
        super().__init__(f"no proposal compiler for reason_class={reason_class}{where}")


def cluster_records(store: Any, insight: InsightCluster) -> list[DecisionRecord]:
    """The decision records the cluster's corrections were made on (from the store)."""
    out = []
    for fid in insight.feedback_ids:
        fb = store.get(FeedbackEntry, fid)
        rec = store.get(DecisionRecord, fb.decision_record_id) if fb else None
        if rec is not None:
            out.append(rec)
    return out


def _context(insight: InsightCluster, project: DomainConfig) -> dict[str, Any]:
    reason = insight.override_reason_class
    return {
        "insight_id": insight.insight_id,
        "count": insight.count,
        "key": insight.decision_key,
        "reason_class": reason,
        "reason_upper": reason.upper(),
        "stem": project.rule_stem(insight.decision_key),
        "hints": dict(insight.representative_field_overrides),
    }


def _row(reason: str | None, project: DomainConfig) -> CompilerSpec | None:
    return project.compilers.get(reason or "")


def _live(bundles: BundleRegistry | PolicyBundle | None, bundle_id: str) -> PolicyBundle | None:
    if isinstance(bundles, BundleRegistry):
        return bundles.active(bundle_id)
    return bundles


def propose_from_insight(
    insight: InsightCluster,
    *,
    bundles: BundleRegistry | PolicyBundle | None = None,
    records: Sequence[DecisionRecord] = (),
    runs_per_day: float | None = None,
    project: DomainConfig | None = None,
) -> StrategyProposal:
    """A proposed StrategyProposal for a typed cluster; pinned to the live bundle when given."""
    project = project or active_project()
    spec = _row(insight.override_reason_class, project)
    if spec is None:
        raise UnknownReasonClass(
            insight.override_reason_class, f" in {project.compilers_path} (project {project.name})"
        )
    if spec.shape == "layer":
        raise CompileError(
            f"{insight.override_reason_class} compiles to a {spec.layer} StrategyRule, not a "
            "policy proposal (use compile_strategy_rule / compile_insight)"
        )
    bundle_id, live = "", None
    if spec.shape != "adjust_intent_rubric":  # a rubric is the intent's, not a key's bundle
        try:
            bundle_id = project.bundle_for_key(insight.decision_key)
        except ProjectError as exc:
            raise CompileError(str(exc)) from None
        live = _live(bundles, bundle_id)
    ctx = _context(insight, project)
    if spec.shape == "python":
        made = call_entry(spec, project, insight=insight, live=live, records=records, context=ctx)
        if isinstance(made, StrategyRule):
            raise CompileError(
                f"{spec.entry} compiled a StrategyRule, not a policy proposal (use compile_insight)"
            )
        if isinstance(made, StrategyProposal):
            return made
        arm = made
    elif spec.shape == "adjust_intent_rubric":
        from contextos_lab.proposals.policy.rubric import criterion_rule, empty_rubric, rubric_id

        intent = project.intent_of(insight.decision_key) or insight.decision_key
        rid = rubric_id(intent)
        rubric = bundles.active(rid) if isinstance(bundles, BundleRegistry) else empty_rubric(rid)
        why = (
            f"Cluster {insight.insight_id}: {insight.count} operator overrides for "
            f"{insight.decision_key} ({insight.override_reason_class}). Adjusting the {intent} "
            "intent rubric."
        )
        body = criterion_rule(spec.rubric or {}, insight.decision_key, why)
        op = PatchOp.modify if rubric.rule(body["rule_id"]) else PatchOp.add
        arm = Arm(ProposalClass.adjust_intent_rubric, op, body, why)
        return _proposal(
            insight, arm, PatchTarget.intent_rubric, rid, rubric, records, runs_per_day
        )
    else:
        arm = POLICY_SHAPES[spec.shape](spec, ctx, live, records)
    return _proposal(
        insight, arm, PatchTarget.policy_bundle, bundle_id, live, records, runs_per_day
    )


def _proposal(
    insight: InsightCluster,
    arm: Arm,
    target: PatchTarget,
    target_id: str,
    live: PolicyBundle | None,
    records: Sequence[DecisionRecord],
    runs_per_day: float | None,
) -> StrategyProposal:
    patch = Patch(target=target, target_id=target_id, op=arm.op, body=arm.body)
    rate = DEFAULT_CHANGE_RATE
    if live is not None and records and target == PatchTarget.policy_bundle:
        candidate = apply_patch(live, patch)
        changed = sum(evaluate(live, r) != evaluate(candidate, r) for r in records)
        rate = changed / len(records)
    days = max((insight.latest - insight.earliest).total_seconds() / 86400, 1.0)
    seed = canonical_json(
        {"insight": insight.insight_id, "class": arm.proposal_class.value, "patch": arm.body}
    )
    return StrategyProposal(
        proposal_id=new_id("sp", at=insight.latest, seed=seed),
        insight_id=insight.insight_id,
        proposal_class=arm.proposal_class,
        patch=patch,
        rationale=arm.rationale,
        expected_impact=ExpectedImpact(
            runs_affected_per_day=runs_per_day
            if runs_per_day is not None
            else insight.count / days,
            expected_decision_change_rate=rate,
        ),
        rollback_target=live.ref if live is not None else None,
    )


def _keys(insight: InsightCluster | Insight) -> tuple[str, str | None, dict, tuple[str, ...]]:
    if isinstance(insight, InsightCluster):
        return (
            insight.decision_key,
            insight.override_reason_class,
            dict(insight.representative_field_overrides),
            insight.representative_evidence_refs,
        )
    return insight.intent, None, {}, insight.evidence_refs


def compile_strategy_rule(
    insight: InsightCluster | Insight,
    layer: AdjustmentLayer | str | None = None,
    *,
    value: dict[str, Any] | None = None,
    project: DomainConfig | None = None,
) -> StrategyRule:
    """A proposed seed-001 StrategyRule adjusting one layer, triggered by the insight.

    The layer, type and value come from the call, else the project's `layer` row for the reason
    class, else the core default for a core class."""
    project = project or active_project()
    key, reason, hints, refs = _keys(insight)
    spec = _row(reason, project)
    row = spec if spec is not None and spec.shape == "layer" else None
    if layer is None:
        if row is not None:
            layer = row.layer
        elif reason in DEFAULT_LAYER:
            layer = DEFAULT_LAYER[reason]
        else:
            raise CompileError(f"name a layer: reason class {reason} has no default adjustment")
    if layer is None:  # a `layer` row that names none
        raise CompileError(f"name a layer: the project's row for {reason} names none")
    chosen = AdjustmentLayer(layer)
    same_row = row is not None and row.layer == chosen
    merged = {**(row.value if same_row and row else {}), **dict(value or {})}
    about = str(reason_classes().get(reason or "", {}).get("description", ""))
    adj = adjustment(
        chosen, reason, about, hints, refs, merged, row.type if same_row and row else None
    )
    at = insight.latest if isinstance(insight, InsightCluster) else insight.last_seen
    seed = canonical_json({"insight": insight.insight_id, "adj": adj.model_dump()})
    return StrategyRule(
        rule_id=new_id("str", at=at, seed=seed),
        applies_to={"intent": key},
        trigger={"from_insight": insight.insight_id},
        adjustment=adj,
        release_gate_target=key,
    )


def compile_insight(
    insight: InsightCluster,
    *,
    bundles: BundleRegistry | PolicyBundle | None = None,
    records: Sequence[DecisionRecord] = (),
    project: DomainConfig | None = None,
) -> StrategyProposal | StrategyRule:
    """What the project's row for the insight's reason class calls for: a policy proposal, or a
    layer StrategyRule (a `python` row may return either)."""
    project = project or active_project()
    spec = _row(insight.override_reason_class, project)
    if spec is not None and spec.shape == "layer":
        return compile_strategy_rule(insight, project=project)
    if spec is None and insight.override_reason_class in DEFAULT_LAYER:
        return compile_strategy_rule(insight, project=project)
    if spec is not None and spec.shape == "python":
        key_spec = project.decision_keys.get(insight.decision_key)
        live = _live(bundles, key_spec.bundle) if key_spec and key_spec.bundle else None
        made = call_entry(
            spec,
            project,
            insight=insight,
            live=live,
            records=records,
            context=_context(insight, project),
        )
        if isinstance(made, (StrategyRule, StrategyProposal)):
            return made
        if key_spec is None or key_spec.bundle is None:
            raise CompileError(
                str(ProjectError(f"no policy bundle governs {insight.decision_key}"))
            )
        return _proposal(
            insight, made, PatchTarget.policy_bundle, key_spec.bundle, live, records, None
        )
    return propose_from_insight(insight, bundles=bundles, records=records, project=project)
