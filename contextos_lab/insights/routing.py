"""Signal routing (seed 001): which surface owns the fix, decided by a named, visible rule.

The table is data; each rule is a named predicate over an Insight, tried in order, first match
wins, and the last rule always matches, so every insight routes. Reason classes come from the
pattern's key (`support.key.reason_class` / `override_reason_class`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from contextos_lab.schemas.insight import Insight, InsightKind

#: Seed 001's routing classes: route first, typical proposal.
SIGNAL_ROUTES: dict[str, dict[str, str]] = {
    "evidence_gap": {
        "route": "Context Pack evidence source or ResearchQueue",
        "proposal": "ResearchTask or knowledge patch for review",
    },
    "strategy_gap": {
        "route": "Tool catalog, planner rule, or strategy layer",
        "proposal": "StrategyRule against tool_selection, planner or prompt",
    },
    "policy_gap": {
        "route": "Governance policy and approval boundary",
        "proposal": "Policy change proposal with replay evidence",
    },
    "workflow_gap": {
        "route": "Authority boundary, workflow design, or queue owner",
        "proposal": "Insight plus operational Note or governance proposal",
    },
    "scorecard_regression": {
        "route": "Release gate, rollback trigger, monitor window",
        "proposal": "Rollback or TuningProposal with guardrails",
    },
    "environment_task_failure": {
        "route": "Replay environment / task fixture and run budget",
        "proposal": "Fixture fix or budget TuningProposal",
    },
    "operational_bottleneck": {
        "route": "Retrieval path, tool path, or context shape",
        "proposal": "TuningProposal with latency guardrails",
    },
}
#: Signal classes that are knowledge gaps (ResearchQueue), not strategy gaps.
KNOWLEDGE_GAPS = frozenset({"evidence_gap"})

EVIDENCE_REASONS = frozenset({"evidence_missing"})
POLICY_REASONS = frozenset(
    {
        "policy_misapplied",
        "approval_threshold_too_low",
        "approval_threshold_too_high",
        "missing_idv_check",
        "pii_exposed",
    }
)
WORKFLOW_REASONS = frozenset({"over_escalation", "transferred_to_human"})
ENVIRONMENT_REASONS = frozenset({"step_limit"})
STRATEGY_REASONS = frozenset(
    {
        "wrong_tool",
        "wrong_arguments",
        "extra_write",
        "missing_action",
        "wrong_skill_routed",
        "refund_window_misjudged",
        "agent_mistake",
    }
)


def reason_of(insight: Insight) -> str | None:
    key = insight.support.get("key") or {}
    return key.get("reason_class") or key.get("override_reason_class")


def _trend(insight: Insight) -> str | None:
    return (insight.support.get("trend") or {}).get("direction")


@dataclass(frozen=True)
class RoutingRule:
    name: str
    signal: str
    text: str
    applies: Callable[[Insight], bool]


ROUTING_RULES: tuple[RoutingRule, ...] = (
    RoutingRule(
        "evidence_missing",
        "evidence_gap",
        "kind gap_detected, or reason class evidence_missing (a missing fact)",
        lambda i: i.kind == InsightKind.gap_detected or reason_of(i) in EVIDENCE_REASONS,
    ),
    RoutingRule(
        "policy_behaviour",
        "policy_gap",
        "kind blocked_decision, or a policy reason class ("
        + ", ".join(sorted(POLICY_REASONS))
        + ")",
        lambda i: i.kind == InsightKind.blocked_decision or reason_of(i) in POLICY_REASONS,
    ),
    RoutingRule(
        "repeated_escalation",
        "workflow_gap",
        "kind over-escalation, or reason class over_escalation / transferred_to_human",
        lambda i: i.kind == InsightKind.over_escalation or reason_of(i) in WORKFLOW_REASONS,
    ),
    RoutingRule(
        "environment_limit",
        "environment_task_failure",
        "reason class step_limit (the run or its environment ran out, not the decision)",
        lambda i: reason_of(i) in ENVIRONMENT_REASONS,
    ),
    RoutingRule(
        "wrong_action",
        "strategy_gap",
        "a strategy reason class (" + ", ".join(sorted(STRATEGY_REASONS)) + ")",
        lambda i: reason_of(i) in STRATEGY_REASONS,
    ),
    RoutingRule(
        "slow_path",
        "operational_bottleneck",
        "kind common_detour (repeated tool calls cost latency and budget)",
        lambda i: i.kind == InsightKind.common_detour,
    ),
    RoutingRule(
        "rising_failures",
        "scorecard_regression",
        "any other insight whose daily count is rising (trend p < 0.05)",
        lambda i: _trend(i) == "rising",
    ),
    RoutingRule(
        "default_strategy",
        "strategy_gap",
        "no specific rule matched: a recurring failure is a strategy-layer question first",
        lambda i: True,
    ),
)


@dataclass(frozen=True)
class Routing:
    insight_id: str
    signal: str
    rule: str
    rule_text: str
    route: str
    proposal: str

    @property
    def knowledge_gap(self) -> bool:
        return self.signal in KNOWLEDGE_GAPS


def route(insight: Insight) -> Routing:
    rule = next(r for r in ROUTING_RULES if r.applies(insight))
    row = SIGNAL_ROUTES[rule.signal]
    return Routing(
        insight.insight_id, rule.signal, rule.name, rule.text, row["route"], row["proposal"]
    )


def routing_frame(insights: Sequence[Insight]) -> pd.DataFrame:
    rows = []
    for i in insights:
        r = route(i)
        rows.append(
            {
                "insight_id": i.insight_id,
                "kind": i.kind.value,
                "pattern": i.pattern,
                "signal": r.signal,
                "rule": r.rule,
                "rule_text": r.rule_text,
                "route": r.route,
                "proposal": r.proposal,
            }
        )
    columns = ["insight_id", "kind", "pattern", "signal", "rule", "rule_text", "route", "proposal"]
    return pd.DataFrame(rows, columns=columns)
