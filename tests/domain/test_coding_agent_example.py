"""The second example domain works as configuration only: its raw files ingest through the CLI,
its corrections cluster, and every row of its compiler table compiles (all six layers, every
declarative shape, its Python entry point); its seed-000 proposal replays clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.synthesize import synthesize_insights
from contextos_lab.proposals.compile.compilers import (
    cluster_records,
    compile_insight,
    compile_strategy_rule,
    propose_from_insight,
)
from contextos_lab.proposals.policy.bundle import PolicyBundle, apply_patch, evaluate
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.replay.replay import run_replay_gate
from contextos_lab.schemas import AdjustmentLayer, FeedbackEntry, InsightCluster
from contextos_lab.schemas.strategy import StrategyProposal, StrategyRule
from contextos_lab.store import ExperienceStore
from tests.domain.conftest import CODING_AGENT

DATA = CODING_AGENT / "data"


@pytest.fixture
def ingested(tmp_path: Path, coding_agent, capsys) -> ExperienceStore:
    url = f"sqlite:///{tmp_path}/exp.db"
    for kind, name in (
        ("decisions", "decisions"),
        ("feedback", "feedback"),
        ("scorecards", "scorecards"),
    ):
        argv = ["ingest", kind, str(DATA / f"{name}.jsonl"), "--store", url]
        argv += [
            "--project",
            str(CODING_AGENT),
            "--overriders",
            str(DATA / "authorised_overriders.json"),
        ]
        assert main(argv) == 0
        assert "quarantined rows" not in capsys.readouterr().out
    return ExperienceStore(
        url, authorised_overriders=["eng_lead_ada", "sre_oncall_lin", "security_owner_kim"]
    )


def test_raw_files_ingest_and_cluster(ingested) -> None:
    feedback = ingested.list(FeedbackEntry)
    assert len(feedback) == 70
    clusters = synthesize_insights(list(feedback), store=ingested)
    by_reason = {c.override_reason_class: c for c in clusters}
    assert by_reason["merged_without_tests"].count == 27
    assert by_reason["merged_without_tests"].decision_key == "code.change.merge"
    assert len(ingested.list(InsightCluster)) == len(clusters)


def test_merged_without_tests_compiles_and_replays_clean(ingested, tmp_path) -> None:
    clusters = synthesize_insights(list(ingested.list(FeedbackEntry)), store=ingested)
    insight = next(c for c in clusters if c.override_reason_class == "merged_without_tests")
    bundles = BundleRegistry(tmp_path / "bundles")
    records = cluster_records(ingested, insight)
    proposal = propose_from_insight(insight, bundles=bundles, records=records)
    assert proposal.proposal_class == "tighten_evidence_requirement"
    assert proposal.patch.target_id == "POLICY_CODE_MERGE_V1" and proposal.patch.op == "add"
    assert proposal.patch.body["rule_id"] == "R_MERGE_REQUIRES_CI"
    assert proposal.expected_impact.expected_decision_change_rate == 1.0  # all 27 now denied
    verdict = run_replay_gate(proposal, None, bundles)
    assert verdict.status == "replay_clean"
    assert verdict.changed_to_expected == 6 and verdict.changed_unexpected == 0


def _cluster(reason: str, key: str, **over) -> InsightCluster:
    from datetime import UTC, datetime

    t = datetime(2026, 10, 5, tzinfo=UTC)
    fields = {
        "insight_id": f"ins_{reason.replace('_', '')[:14]}",
        "decision_key": key,
        "override_reason_class": reason,
        "count": 6,
        "feedback_ids": [f"fb_2026_10_05_c{i}" for i in range(6)],
        "earliest": t,
        "latest": t,
        "representative_evidence_refs": ["diff_review:1"],
    }
    return InsightCluster(**(fields | over))


def _bundle(name: str) -> PolicyBundle:
    return PolicyBundle.from_file(CODING_AGENT / "harness" / "policy" / "bundles" / f"{name}.json")


def test_every_row_of_the_compiler_table_compiles(coding_agent) -> None:
    layers, classes = set(), set()
    for reason, spec in coding_agent.compilers.items():
        key = coding_agent.reason_classes[reason].decision_keys[0]
        hints = {"lines_changed": 0}
        insight = _cluster(reason, key, representative_field_overrides=hints)
        bundle_id = coding_agent.decision_keys[key].bundle
        live = _bundle(bundle_id) if bundle_id else None
        made = compile_insight(insight, bundles=live, records=_records_for(reason))
        if spec.shape == "layer":
            assert isinstance(made, StrategyRule) and made.adjustment.layer == spec.layer
            layers.add(made.adjustment.layer)
            continue
        assert isinstance(made, StrategyProposal), reason
        classes.add(made.proposal_class.value)
        if made.patch.target == "policy_bundle":
            apply_patch(live, made.patch)  # every policy patch applies to the live bundle
    assert layers == set(AdjustmentLayer)
    assert classes == {
        "tighten_evidence_requirement",
        "raise_approval_threshold",
        "lower_approval_threshold",
        "add_policy_rule",
        "add_redaction_rule",
        "adjust_intent_rubric",
    }


def _records_for(reason: str):
    from tests.factories import decision_record

    if reason == "oversized_diff_merged":  # 450- and 700-line merges needed a reviewer
        amounts = [450, 700]
    elif reason == "needless_review_request":  # 900-line merges did not
        amounts = [900, 1010]
    else:
        return []
    return [
        decision_record(
            i,
            decision_key="code.change.merge",
            intent="code.change",
            inputs={"lines_changed": a},
            evidence_refs=["diff_review:x"],
        )
        for i, a in enumerate(amounts)
    ]


def test_threshold_shapes_move_the_gate_on_the_declared_input(coding_agent) -> None:
    live = _bundle("POLICY_CODE_MERGE_V1")
    tighter = propose_from_insight(
        _cluster("oversized_diff_merged", "code.change.merge"),
        bundles=live,
        records=_records_for("oversized_diff_merged"),
    )
    assert tighter.patch.body["then"]["approval_above"] == 400.0
    assert tighter.patch.body["then"]["amount_field"] == "lines_changed"
    after = apply_patch(live, tighter.patch)
    for rec in _records_for("oversized_diff_merged"):
        assert evaluate(live, rec).decision == "approve"
        assert evaluate(after, rec).decision == "escalate"
    looser = propose_from_insight(
        _cluster("needless_review_request", "code.change.merge"),
        bundles=live,
        records=_records_for("needless_review_request"),
    )
    assert looser.patch.body["then"]["approval_above"] == 1100.0


def test_python_entry_point_resolves_inside_the_project(coding_agent) -> None:
    p = propose_from_insight(
        _cluster("flaky_test_ignored", "code.change.merge"), bundles=_bundle("POLICY_CODE_MERGE_V1")
    )
    assert p.patch.body["rule_id"] == "R_MERGE_FLAKE_TRIAGE" and p.patch.op == "add"
    assert p.proposal_class == "add_policy_rule"


def test_layer_rules_carry_the_table_values(coding_agent) -> None:
    rule = compile_strategy_rule(_cluster("destructive_command", "code.command.run"))
    assert rule.adjustment.type == "tool_restriction"
    assert "git.push_force" in rule.adjustment.value["deny"]
    budget = compile_strategy_rule(_cluster("runaway_loop", "code.command.run"))
    assert budget.adjustment.value["max_steps"] == 40
