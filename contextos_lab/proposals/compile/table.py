"""The declarative compiler shapes: one pure function per row shape of `harness/compilers.yaml`.

Policy shapes return `(proposal_class, op, body, rationale)` for a patch on the decision key's
policy bundle; `adjustment` builds a StrategyRule's seed-001 adjustment for one of the six
layers. Nothing here names a domain: rule ids, evidence kinds and wording come from the row.
`auto` op: modify the live rule of that id, else add it; with no live bundle given, threshold
shapes assume the gate exists (modify), the others add.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contextos_lab.domain.config import CompilerSpec
from contextos_lab.errors import ContextosError
from contextos_lab.proposals.policy.bundle import AMOUNT, PolicyBundle
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.strategy import Adjustment, AdjustmentLayer, PatchOp, ProposalClass


class CompileError(ContextosError, ValueError):
    """The compiler cannot build a well-formed proposal or rule from this insight."""


@dataclass(frozen=True)
class Arm:
    """What a policy shape produced: the proposal class, the patch op and body, the rationale."""

    proposal_class: ProposalClass
    op: PatchOp
    body: dict[str, Any]
    rationale: str


def fmt(template: str, **values: Any) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise CompileError(f"compiler template {template!r}: {exc}") from None


def _op(spec: CompilerSpec, existing: Any, live: PolicyBundle | None, gate: bool) -> PatchOp:
    if spec.op != "auto":
        return PatchOp(spec.op)
    if existing is not None or (live is None and gate):
        return PatchOp.modify
    return PatchOp.add


def _words(spec: CompilerSpec, ctx: dict[str, Any], rule: str, why: str) -> tuple[str, str]:
    return fmt(spec.rule_rationale or rule, **ctx), fmt(spec.rationale or why, **ctx)


def tighten_evidence(
    spec: CompilerSpec, ctx: dict, live: PolicyBundle | None, records: Sequence[DecisionRecord]
) -> Arm:
    rule_id = fmt(spec.rule_id or "{stem}_REQUIRES_EVIDENCE", **ctx)
    existing = live.rule(rule_id) if live else None
    requires = list(spec.requires)
    if spec.merge:
        requires = sorted({*requires, *(existing.then.requires if existing else ())})
    rule_why, why = _words(
        spec,
        {**ctx, "requires": ", ".join(spec.requires)},
        "Requires {requires}; {count} prior corrections.",
        "Cluster {insight_id}: {count} operator overrides for {key} ({reason_class}). "
        "Requiring {requires} evidence.",
    )
    body = {
        "rule_id": rule_id,
        "applies_to": spec.applies_to
        or (existing.applies_to if existing else {"intent": ctx["key"]}),
        "then": {"allow": True, "requires": requires},
        "rationale": rule_why,
    }
    return Arm(
        ProposalClass.tighten_evidence_requirement, _op(spec, existing, live, False), body, why
    )


def _new_gate(
    spec: CompilerSpec, ctx: dict, records: Sequence[DecisionRecord], lower_gate: bool
) -> float:
    """The new approval threshold from the corrected amounts, else the cluster's hint."""
    amounts = [
        float(r.inputs[spec.amount_field])
        for r in records
        if isinstance(r.inputs.get(spec.amount_field), (int, float))
    ]
    hinted = ctx["hints"].get(spec.hint_field)
    if amounts and lower_gate:
        return (math.ceil(min(amounts) / spec.step) - 1) * spec.step
    if amounts:
        return (math.floor(max(amounts) / spec.step) + 1) * spec.step
    if isinstance(hinted, (int, float)):
        return float(hinted)
    raise CompileError(
        f"{ctx['insight_id']}: no amounts to set a gate from (give the cluster's decision "
        f"records, or representative_field_overrides.{spec.hint_field})"
    )


def _threshold(
    spec: CompilerSpec,
    ctx: dict,
    live: PolicyBundle | None,
    records: Sequence[DecisionRecord],
    *,
    lower_gate: bool,
) -> Arm:
    """`raise_approval_threshold` ("raising the gate", seed 000) moves human approval to start
    at the largest multiple of `step` strictly below the smallest corrected amount; `lower_...`
    to the smallest multiple strictly above the largest. Amounts come from the cluster's
    decision records, else the cluster's `representative_field_overrides[hint_field]`."""
    rule_id = fmt(spec.rule_id or "{stem}_APPROVAL_GATE", **ctx)
    threshold = _new_gate(spec, ctx, records, lower_gate)
    existing = live.rule(rule_id) if live else None
    current = existing.then.approval_above if existing else None
    if current is not None and lower_gate and threshold >= current:
        raise CompileError(f"{rule_id}: new gate {threshold} is not below the live {current}")
    if current is not None and not lower_gate and threshold <= current:
        raise CompileError(f"{rule_id}: new gate {threshold} is not above the live {current}")
    then = existing.then.model_dump(mode="json") if existing else {"allow": True, "requires": []}
    was = f" (was {current:g})." if current is not None else "."
    verb = "Raising the approval gate" if lower_gate else "Lowering the approval gate"
    rule_why, why = _words(
        spec,
        {**ctx, "threshold": f"{threshold:g}", "current": current},
        "Human approval above {threshold}; {count} prior corrections.",
        "Cluster {insight_id}: {count} "
        + (
            "auto-approvals operators said needed a human. "
            if lower_gate
            else "escalations operators said the agent could settle. "
        )
        + verb
        + ": approval above {threshold}"
        + was,
    )
    body = {
        "rule_id": rule_id,
        "applies_to": spec.applies_to
        or (existing.applies_to if existing else {"intent": ctx["key"]}),
        "then": {
            **then,
            "approval_above": max(threshold, 0.0),
            **({"amount_field": spec.amount_field} if spec.amount_field != AMOUNT else {}),
        },
        "rationale": rule_why,
    }
    cls = (
        ProposalClass.raise_approval_threshold
        if lower_gate
        else ProposalClass.lower_approval_threshold
    )
    return Arm(cls, _op(spec, existing, live, True), body, why)


def raise_approval_threshold(spec, ctx, live, records) -> Arm:
    return _threshold(spec, ctx, live, records, lower_gate=True)


def lower_approval_threshold(spec, ctx, live, records) -> Arm:
    return _threshold(spec, ctx, live, records, lower_gate=False)


def add_policy_rule(
    spec: CompilerSpec, ctx: dict, live: PolicyBundle | None, records: Sequence[DecisionRecord]
) -> Arm:
    rule_id = fmt(spec.rule_id or "{stem}_{reason_upper}", **ctx)
    existing = live.rule(rule_id) if live else None
    rule_why, why = _words(
        spec,
        ctx,
        "Added after {count} corrections ({reason_class}).",
        "Cluster {insight_id}: {count} operator overrides for {key} ({reason_class}). "
        "Adding policy rule " + rule_id + ".",
    )
    body = {
        "rule_id": rule_id,
        "applies_to": spec.applies_to or {"intent": ctx["key"]},
        "then": dict(spec.then or {}),
        "rationale": rule_why,
    }
    return Arm(ProposalClass.add_policy_rule, _op(spec, existing, live, False), body, why)


def add_redaction_rule(
    spec: CompilerSpec, ctx: dict, live: PolicyBundle | None, records: Sequence[DecisionRecord]
) -> Arm:
    rule_id = fmt(spec.rule_id or "{stem}_REDACT_{reason_upper}", **ctx)
    existing = live.rule(rule_id) if live else None
    redact = sorted({*spec.redact, *(existing.then.redact if existing else ())})
    rule_why, why = _words(
        spec,
        {**ctx, "redact": ", ".join(redact)},
        "Redact {redact} from output; {count} prior corrections.",
        "Cluster {insight_id}: {count} operator overrides for {key} ({reason_class}). "
        "Redacting {redact}.",
    )
    then = existing.then.model_dump(mode="json") if existing else {"allow": True, "requires": []}
    body = {
        "rule_id": rule_id,
        "applies_to": spec.applies_to or {"intent": ctx["key"]},
        "then": {**then, "redact": redact},
        "rationale": rule_why,
    }
    return Arm(ProposalClass.add_redaction_rule, _op(spec, existing, live, False), body, why)


PolicyShape = Callable[[CompilerSpec, dict, "PolicyBundle | None", Sequence[DecisionRecord]], Arm]
POLICY_SHAPES: dict[str, PolicyShape] = {
    "tighten_evidence": tighten_evidence,
    "raise_approval_threshold": raise_approval_threshold,
    "lower_approval_threshold": lower_approval_threshold,
    "add_policy_rule": add_policy_rule,
    "add_redaction_rule": add_redaction_rule,
}


def adjustment(
    layer: AdjustmentLayer,
    insight_reason: str | None,
    description: str,
    hints: dict,
    refs: tuple[str, ...],
    value: dict,
    kind: str | None = None,
) -> Adjustment:
    """The seed-001 adjustment for one layer; `kind` and `value` from the table or the caller."""
    L = AdjustmentLayer
    if layer == L.planner:
        pref = {k: value.get(k, hints.get(k)) for k in ("prefer_tool", "over")}
        if not all(pref.values()):
            raise CompileError("planner tool_preference needs prefer_tool and over (value=)")
        return Adjustment(layer=layer, type=kind or "tool_preference", value=pref)
    if layer == L.retrieval:
        inject = value.get("inject") or sorted({r.split(":", 1)[0] for r in refs})
        if not inject:
            raise CompileError("retrieval evidence_injection needs evidence kinds to inject")
        return Adjustment(
            layer=layer, type=kind or "evidence_injection", value={**value, "inject": inject}
        )
    if layer == L.memory_recall:
        recall = {"recall": "correction", "reason_class": insight_reason, "window_days": 90}
        return Adjustment(layer=layer, type=kind or "correction_recall", value={**recall, **value})
    if layer == L.prompt:
        text = value.get("instruction") or (
            f"Operators corrected this decision for: {description}" if description else ""
        )
        if not text:
            raise CompileError("prompt instruction needs a reason class or value['instruction']")
        return Adjustment(
            layer=layer, type=kind or "instruction", value={**value, "instruction": text}
        )
    if layer == L.tool_selection:
        allow = list(value.get("allow") or hints.get("allow_tools") or ())
        deny = list(value.get("deny") or hints.get("deny_tools") or ())
        if not allow and not deny:
            raise CompileError("tool_selection needs tools to allow or deny (value= allow/deny)")
        return Adjustment(
            layer=layer,
            type=kind or "tool_restriction",
            value={**value, "allow": allow, "deny": deny},
        )
    if layer == L.budget_allocation:
        limits = {k: v for k, v in value.items() if isinstance(v, (int, float)) and v > 0}
        if not limits:
            raise CompileError(
                "budget_allocation needs positive limits in value= (e.g. max_steps, "
                "context_token_budget, max_cost_cents)"
            )
        return Adjustment(layer=layer, type=kind or "budget_limit", value={**value, **limits})
    raise CompileError(f"no rule compiler for layer {layer}")
