from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.stats import hypergeom
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from contextos_lab.harness.reference.synthetic_feedback import support_desk
from contextos_lab.insights.routing import ROUTING_RULES, SIGNAL_ROUTES, route, routing_frame
from contextos_lab.insights.runs.insights import find_run_insights, runs_frame
from contextos_lab.insights.support import Counts, rate_test, support_for, trend
from contextos_lab.insights.synthesize import insights_from_clusters, synthesize_insights
from contextos_lab.schemas import Insight, InsightKind

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def test_rate_test_matches_a_hand_checked_statsmodels_call() -> None:
    got = rate_test(Counts(hits_in=12, n_in=40, hits_out=9, n_out=160))
    z, _ = proportions_ztest([12, 9], [40, 160], alternative="larger")
    lo, hi = proportion_confint(12, 40, alpha=0.05, method="wilson")
    # the test is Fisher's exact (one-sided): P(X >= 12), X ~ Hypergeom(200 runs, 21 hits, 40 drawn)
    assert got["p_value"] == pytest.approx(hypergeom.sf(11, 200, 21, 40))
    assert got["test"].startswith("fisher_exact") and got["z"] == pytest.approx(z)
    assert got["rate_ci95"] == pytest.approx([lo, hi])
    assert got["rate"] == 0.3 and got["baseline_rate"] == pytest.approx(9 / 160)
    # by hand: pooled p = 21/200, se = sqrt(p(1-p)(1/40+1/160))
    pooled = 21 / 200
    se = np.sqrt(pooled * (1 - pooled) * (1 / 40 + 1 / 160))
    assert z == pytest.approx((0.3 - 9 / 160) / se)


def test_small_counts_are_tested_exactly_not_by_the_normal_approximation() -> None:
    """5 of 8 on a key against 3 of 16 elsewhere: the z-test says p ~ 0.01, the exact
    hypergeometric tail is larger (fails on the old z-test)."""
    got = rate_test(Counts(hits_in=5, n_in=8, hits_out=3, n_out=16))
    _, p_z = proportions_ztest([5, 3], [8, 16], alternative="larger")
    assert got["p_value"] == pytest.approx(hypergeom.sf(4, 24, 8, 8))
    assert got["p_value"] > 1.5 * p_z


def test_no_baseline_or_no_variance_means_no_confidence() -> None:
    times = pd.Series([T0], dtype="datetime64[us, UTC]")
    conf, sup = support_for(Counts(5, 5, 0, 0), times, T0, T0)
    assert conf == 0.0 and sup["test"].startswith("none")
    conf, sup = support_for(Counts(0, 5, 0, 5), times, T0, T0)
    assert conf == 0.0 and "variance" in sup["test"]


def test_trend_is_an_ols_slope_of_daily_counts() -> None:
    stamps = [T0 + timedelta(days=d, hours=h) for d in range(10) for h in range(d)]
    got = trend(pd.Series(stamps), T0, T0 + timedelta(days=9))
    fit = sm.OLS(np.arange(10.0), sm.add_constant(np.arange(10.0))).fit()
    assert got["slope_per_day"] == pytest.approx(fit.params[1]) == pytest.approx(1.0)
    assert got["direction"] == "rising"
    assert trend(pd.Series([T0]), T0, T0)["direction"] == "insufficient"


def _insight(kind: InsightKind, key: dict) -> Insight:
    return Insight(
        insight_id="ins_x1",
        kind=kind,
        intent="k",
        pattern="p",
        occurrences=5,
        first_seen=T0,
        last_seen=T0,
        confidence=0.5,
        support={"key": key},
    )


def test_every_kind_routes_with_its_rule_visible() -> None:
    for kind in InsightKind:
        r = route(_insight(kind, {}))
        assert r.signal in SIGNAL_ROUTES and r.rule and r.rule_text
    assert route(_insight(InsightKind.gap_detected, {})).signal == "evidence_gap"
    assert route(_insight(InsightKind.blocked_decision, {})).signal == "policy_gap"
    assert route(_insight(InsightKind.over_escalation, {})).signal == "workflow_gap"
    assert route(_insight(InsightKind.common_detour, {})).signal == "operational_bottleneck"
    fc = InsightKind.failure_cluster
    assert route(_insight(fc, {"reason_class": "step_limit"})).signal == (
        "environment_task_failure"
    )
    assert route(_insight(fc, {"override_reason_class": "wrong_tool"})).signal == "strategy_gap"
    assert route(_insight(fc, {})).rule == "default_strategy"


#: Seed 001's signal-routing table, row by row: runtime signal, route first, typical proposal.
SEED_001_TABLE = (
    (
        "Missing fact",
        "Context Pack evidence source or ResearchQueue",
        "ResearchTask or knowledge patch for review",
    ),
    (
        "Wrong tool choice",
        "Tool catalog, planner rule, or strategy layer",
        "StrategyRule against tool_selection or planner",
    ),
    (
        "Bad policy behavior",
        "Governance policy and approval boundary",
        "Policy change proposal with replay evidence",
    ),
    (
        "Confusing user output",
        "Prompt examples, receipt language, or response rubric",
        "StrategyRule against prompt plus scorecard update",
    ),
    (
        "Repeated escalation",
        "Authority boundary, workflow design, or queue owner",
        "Insight plus operational Note or governance proposal",
    ),
    (
        "Slow run",
        "Retrieval path, tool path, or context shape",
        "TuningProposal with latency guardrails",
    ),
    ("Expensive run", "Budget allocation and context size", "TuningProposal with economics target"),
    (
        "Recurring operator correction",
        "FeedbackStore and StrategyCompiler",
        "FeedbackRecord leading to StrategyRule",
    ),
    (
        "User distrust",
        "Receipts, approval copy, and explanation quality",
        "Insight plus product-surface or rubric proposal",
    ),
    (
        "New risk pattern",
        "Release gate, rollback trigger, or refusal policy",
        "Policy gate proposal with production monitor criteria",
    ),
)


def test_routing_table_covers_all_ten_rows_of_seed_001() -> None:
    assert set(SIGNAL_ROUTES) == {r.signal for r in ROUTING_RULES}
    rows = {(v["runtime_signal"], v["route"], v["proposal"]) for v in SIGNAL_ROUTES.values()}
    assert set(SEED_001_TABLE) <= rows
    # plus the Classify step's scorecard regression and environment/task failure
    assert len(SIGNAL_ROUTES) == 12


@pytest.mark.parametrize(
    ("reason", "signal"),
    [
        ("evidence_missing", "evidence_gap"),
        ("wrong_tool", "strategy_gap"),
        ("policy_misapplied", "policy_gap"),
        ("confusing_output", "output_gap"),
        ("over_escalation", "workflow_gap"),
        ("slow_run", "operational_bottleneck"),
        ("expensive_run", "cost_overrun"),
        ("user_distrust", "trust_gap"),
        ("new_risk_pattern", "risk_pattern"),
        ("step_limit", "environment_task_failure"),
    ],
)
def test_every_row_is_reachable_from_a_core_reason_class(reason, signal) -> None:
    fc = InsightKind.failure_cluster
    assert route(_insight(fc, {"override_reason_class": reason})).signal == signal


def test_a_correction_cluster_without_a_declared_signal_is_a_recurring_correction(
    monkeypatch,
) -> None:
    from contextos_lab.insights import routing

    monkeypatch.setattr(routing, "reason_classes", lambda: {"odd": {"description": "x"}})
    got = route(_insight(InsightKind.failure_cluster, {"override_reason_class": "odd"}))
    assert (
        got.signal == "recurring_correction" and got.route == "FeedbackStore and StrategyCompiler"
    )


def test_generator_insights_all_route() -> None:
    records, feedback = support_desk(600, 7)
    insights = [
        *find_run_insights(runs_frame(records, feedback)),
        *insights_from_clusters(synthesize_insights(feedback), feedback),
    ]
    frame = routing_frame(insights)
    assert len(frame) == len(insights) and frame["rule_text"].str.len().min() > 0
