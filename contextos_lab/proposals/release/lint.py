"""Release-gate lint (seed 001: "StrategyCompiler produces conflicting rules across primitives
— release-gate lint detects conflicts with active rules").

Conflicts, each refused:
- adjustment rules: an active rule with the same layer, type and applies_to that sets a shared
  value key differently (two tool preferences for one intent), or an identical active rule;
- policy proposals: a patch that does not apply to the live bundle; an active StrategyRule that
  already patched the same bundle rule with a different body (the release would silently undo
  it); or a patched bundle in which two live rules with the same applies_to disagree on allow.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from contextos_lab.errors import ContextosError
from contextos_lab.proposals.policy.bundle import PatchError, PolicyBundle, apply_patch
from contextos_lab.schemas.strategy import StrategyProposal, StrategyRule


class LintConflict(ContextosError, ValueError):
    def __init__(self, subject: str, conflicts: Sequence[str]) -> None:
        self.subject, self.conflicts = subject, list(conflicts)
        super().__init__(f"{subject} conflicts with active rules: " + "; ".join(conflicts))


def active_rules(store: Any) -> list[StrategyRule]:
    return [r for r in store.list(StrategyRule) if r.active]


def rule_conflicts(rule: StrategyRule, active: Iterable[StrategyRule]) -> list[str]:
    out: list[str] = []
    adj = rule.adjustment
    if adj is None:
        return out
    for other in active:
        o = other.adjustment
        if other.rule_id == rule.rule_id or o is None:
            continue
        if (o.layer, o.type, other.applies_to) != (adj.layer, adj.type, rule.applies_to):
            continue
        if o.value == adj.value:
            out.append(f"{other.rule_id} already sets the same {adj.layer.value}/{adj.type}")
            continue
        differing = sorted(k for k in set(o.value) & set(adj.value) if o.value[k] != adj.value[k])
        if differing:
            out.append(
                f"{other.rule_id} sets {adj.layer.value}/{adj.type} {', '.join(differing)} "
                f"for {rule.applies_to} differently"
            )
    return out


def proposal_conflicts(
    proposal: StrategyProposal, live: PolicyBundle, active: Iterable[StrategyRule]
) -> list[str]:
    patch = proposal.patch
    try:
        patched = apply_patch(live, patch)
    except PatchError as exc:
        return [f"patch does not apply to {live.ref}: {exc}"]
    out: list[str] = []
    rule_id = patch.body.get("rule_id")
    for other in active:
        p = other.patch
        if other.proposal_id == proposal.proposal_id or p is None:
            continue
        if (p.target_id, p.body.get("rule_id")) == (patch.target_id, rule_id) and p != patch:
            out.append(f"{other.rule_id} (active) already patched {patch.target_id}/{rule_id}")
    live_rules = [r for r in patched.rules if not r.deprecated]
    for i, a in enumerate(live_rules):
        for b in live_rules[i + 1 :]:
            if a.applies_to == b.applies_to and a.then.allow != b.then.allow:
                out.append(f"{a.rule_id} and {b.rule_id} disagree on allow for {a.applies_to}")
    return out


def check_rule(rule: StrategyRule, active: Iterable[StrategyRule]) -> None:
    conflicts = rule_conflicts(rule, active)
    if conflicts:
        raise LintConflict(rule.rule_id, conflicts)


def check_proposal(
    proposal: StrategyProposal, live: PolicyBundle, active: Iterable[StrategyRule]
) -> None:
    conflicts = proposal_conflicts(proposal, live, active)
    if conflicts:
        raise LintConflict(proposal.proposal_id, conflicts)
