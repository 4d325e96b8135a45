"""Signal routing (seed 001): which surface owns the fix, decided by a named, visible rule.

The table is data: every row of seed 001's signal-routing table (runtime signal, route first,
typical proposal), plus the two classes its "Classify" step adds (scorecard regression,
environment/task failure). Each rule is a named predicate over an Insight, tried in order, first
match wins, and the last rule always matches, so every insight routes. A reason class routes by
the `signal` its registry entry declares (core registry or the project's
`harness/feedback/reason-classes.json`), so the routing code names no domain's classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from contextos_lab.schemas.insight import Insight, InsightKind
from contextos_lab.schemas.reason_classes import reason_classes

#: signal -> seed 001's row: the runtime signal, where to route first, the typical proposal.
SIGNAL_ROUTES: dict[str, dict[str, str]] = {
    "evidence_gap": {
        "runtime_signal": "Missing fact",
        "route": "Context Pack evidence source or ResearchQueue",
        "proposal": "ResearchTask or knowledge patch for review",
    },
    "strategy_gap": {
        "runtime_signal": "Wrong tool choice",
        "route": "Tool catalog, planner rule, or strategy layer",
        "proposal": "StrategyRule against tool_selection or planner",
    },
    "policy_gap": {
        "runtime_signal": "Bad policy behavior",
        "route": "Governance policy and approval boundary",
        "proposal": "Policy change proposal with replay evidence",
    },
    "output_gap": {
        "runtime_signal": "Confusing user output",
        "route": "Prompt examples, receipt language, or response rubric",
        "proposal": "StrategyRule against prompt plus scorecard update",
    },
    "workflow_gap": {
        "runtime_signal": "Repeated escalation",
        "route": "Authority boundary, workflow design, or queue owner",
        "proposal": "Insight plus operational Note or governance proposal",
    },
    "operational_bottleneck": {
        "runtime_signal": "Slow run",
        "route": "Retrieval path, tool path, or context shape",
        "proposal": "TuningProposal with latency guardrails",
    },
    "cost_overrun": {
        "runtime_signal": "Expensive run",
        "route": "Budget allocation and context size",
        "proposal": "TuningProposal with economics target",
    },
    "recurring_correction": {
        "runtime_signal": "Recurring operator correction",
        "route": "FeedbackStore and StrategyCompiler",
        "proposal": "FeedbackRecord leading to StrategyRule",
    },
    "trust_gap": {
        "runtime_signal": "User distrust",
        "route": "Receipts, approval copy, and explanation quality",
        "proposal": "Insight plus product-surface or rubric proposal",
    },
    "risk_pattern": {
        "runtime_signal": "New risk pattern",
        "route": "Release gate, rollback trigger, or refusal policy",
        "proposal": "Policy gate proposal with production monitor criteria",
    },
    "scorecard_regression": {
        "runtime_signal": "Scorecard regression (Classify step)",
        "route": "Release gate, rollback trigger, monitor window",
        "proposal": "Rollback or TuningProposal with guardrails",
    },
    "environment_task_failure": {
        "runtime_signal": "Environment / task failure (Classify step)",
        "route": "Replay environment / task fixture and run budget",
        "proposal": "Fixture fix or budget TuningProposal",
    },
}
#: Signal classes that are knowledge gaps (ResearchQueue), not strategy gaps.
KNOWLEDGE_GAPS = frozenset({"evidence_gap"})


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


def signal_of(insight: Insight) -> str | None:
    """The routing signal the insight's reason class declares in the active registry."""
    reason = reason_of(insight)
    entry = reason_classes().get(reason or "") if reason else None
    return str(entry["signal"]) if entry and entry.get("signal") else None


def _declares(signal: str) -> Callable[[Insight], bool]:
    return lambda i: signal_of(i) == signal


def _is_correction_cluster(insight: Insight) -> bool:
    return bool((insight.support.get("key") or {}).get("override_reason_class"))


ROUTING_RULES: tuple[RoutingRule, ...] = (
    RoutingRule(
        "evidence_missing",
        "evidence_gap",
        "kind gap_detected, or a reason class whose signal is evidence_gap (a missing fact)",
        lambda i: i.kind == InsightKind.gap_detected or signal_of(i) == "evidence_gap",
    ),
    RoutingRule(
        "new_risk",
        "risk_pattern",
        "a reason class whose signal is risk_pattern (a risk no gate covers yet)",
        _declares("risk_pattern"),
    ),
    RoutingRule(
        "policy_behaviour",
        "policy_gap",
        "kind blocked_decision, or a reason class whose signal is policy_gap",
        lambda i: i.kind == InsightKind.blocked_decision or signal_of(i) == "policy_gap",
    ),
    RoutingRule(
        "repeated_escalation",
        "workflow_gap",
        "kind over-escalation, or a reason class whose signal is workflow_gap",
        lambda i: i.kind == InsightKind.over_escalation or signal_of(i) == "workflow_gap",
    ),
    RoutingRule(
        "environment_limit",
        "environment_task_failure",
        "a reason class whose signal is environment_task_failure (e.g. step_limit: the run or "
        "its environment ran out, not the decision)",
        _declares("environment_task_failure"),
    ),
    RoutingRule(
        "confusing_output",
        "output_gap",
        "a reason class whose signal is output_gap (the user could not act on the output)",
        _declares("output_gap"),
    ),
    RoutingRule(
        "user_distrust",
        "trust_gap",
        "a reason class whose signal is trust_gap",
        _declares("trust_gap"),
    ),
    RoutingRule(
        "expensive_run",
        "cost_overrun",
        "a reason class whose signal is cost_overrun (tokens or money over budget)",
        _declares("cost_overrun"),
    ),
    RoutingRule(
        "wrong_action",
        "strategy_gap",
        "a reason class whose signal is strategy_gap (wrong tool, arguments or action)",
        _declares("strategy_gap"),
    ),
    RoutingRule(
        "slow_path",
        "operational_bottleneck",
        "kind common_detour (repeated tool calls cost latency), or a reason class whose signal "
        "is operational_bottleneck",
        lambda i: i.kind == InsightKind.common_detour or signal_of(i) == "operational_bottleneck",
    ),
    RoutingRule(
        "rising_failures",
        "scorecard_regression",
        "any other insight whose daily count is rising (trend p < 0.05)",
        lambda i: _trend(i) == "rising",
    ),
    RoutingRule(
        "recurring_correction",
        "recurring_correction",
        "a cluster of operator corrections whose reason class declares no more specific signal",
        _is_correction_cluster,
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
                "standing": i.support.get("standing"),
                "pattern": i.pattern,
                "signal": r.signal,
                "rule": r.rule,
                "rule_text": r.rule_text,
                "route": r.route,
                "proposal": r.proposal,
            }
        )
    columns = [
        "insight_id",
        "kind",
        "standing",
        "pattern",
        "signal",
        "rule",
        "rule_text",
        "route",
        "proposal",
    ]
    return pd.DataFrame(rows, columns=columns)
