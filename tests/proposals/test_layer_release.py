"""Release paths for all six adjustment layers: compile (the coding_agent project's table), replay
against the project's layer goldens, lint against active rules at the release gate, release with
a pinned layer baseline and the replay verdict in its lineage, roll back."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.domain import use_project
from contextos_lab.insights.synthesize import synthesize_insights
from contextos_lab.proposals.compile.compilers import compile_insight
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.release.layer_registry import LayerRegistry
from contextos_lab.proposals.release.layer_release import release_layer_rule
from contextos_lab.proposals.release.release import ReleaseRefused, lineage_feedback_ids, rollback
from contextos_lab.proposals.release.reviews import sign_reviews
from contextos_lab.proposals.replay.layers import LayerReplayError, run_layer_replay
from contextos_lab.schemas import StrategyRule
from contextos_lab.store import ExperienceStore
from tests.factories import decision_record, feedback_entry

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
#: reason class -> layer, as the project's compilers.yaml declares
LAYERS = {
    "unclear_pr_description": "prompt",
    "wrong_file_edited": "planner",
    "stale_docs_retrieved": "retrieval",
    "destructive_command": "tool_selection",
    "repeated_lint_fix": "memory_recall",
    "runaway_loop": "budget_allocation",
}
#: the decision key each reason class is declared on (harness/feedback/reason-classes.json)
KEY = {"destructive_command": "code.command.run", "runaway_loop": "code.command.run"}


@pytest.fixture
def coding_project():
    previous = use_project(PROJECT)
    yield
    use_project(previous)


@pytest.fixture
def seeded(tmp_path: Path, coding_project) -> ExperienceStore:
    store = ExperienceStore(
        f"sqlite:///{tmp_path}/s.db", authorised_overriders=["ada", "lin", "kim", "cc"]
    )
    records, feedback = [], []
    for c, reason in enumerate(LAYERS):
        for j in range(5):
            i = c * 10 + j
            key = KEY.get(reason, "code.change.merge")
            rec = decision_record(i, decision_key=key, intent=key.rsplit(".", 1)[0])
            records.append(rec)
            feedback.append(feedback_entry(i, rec, override_reason_class=reason, signed_by="ada"))
    store.append_many(records)
    store.append_many(feedback)
    synthesize_insights(feedback, store=store)
    return store


REVIEWERS = {"compliance": "ada", "reliability": "lin", "security": "kim"}


def _release(store, rule, layers, **kw):
    reviews = sign_reviews(store, rule.rule_id, REVIEWERS)
    if "verdict" not in kw:
        kw["verdict"] = run_layer_replay(rule, layers, store=store, supersedes=kw.get("supersedes"))
    return release_layer_rule(
        rule,
        "cc",
        reviews,
        feedback_ids=lineage_feedback_ids(store, rule.trigger["from_insight"]),
        store=store,
        layers=layers,
        **kw,
    )


def test_all_six_layers_compile_release_pinned_and_roll_back(seeded, tmp_path) -> None:
    from contextos_lab.schemas import InsightCluster

    bundles = BundleRegistry(tmp_path / "bundles")
    layers = LayerRegistry.beside(bundles.root)
    clusters = {c.override_reason_class: c for c in seeded.list(InsightCluster)}
    assert set(clusters) == set(LAYERS)
    for reason, layer in LAYERS.items():
        rule = compile_insight(clusters[reason])
        assert isinstance(rule, StrategyRule) and rule.adjustment.layer == layer
        seeded.append(rule)
        before = layers.active(layer).ref
        released, live, baseline = _release(seeded, rule, layers)
        assert released.status == "released" and released.pinned_baseline == before
        assert released.lineage.replay_verdict_id.startswith("rv_")
        assert baseline.ref == before and rule.rule_id in live.rules
        assert layers.active(layer).ref == live.ref != before
        assert set(released.lineage.feedback_ids) == set(clusters[reason].feedback_ids)
        closed, restored = rollback(
            seeded.get(StrategyRule, rule.rule_id),
            store=seeded,
            bundles=bundles,
            actor="oncall",
            reason="drill",
        )
        assert closed.status == "retired" and restored.ref == before
        assert layers.active(layer).ref == before  # the same bytes, the same hash


def test_release_lints_layer_rules_against_active_rules(seeded, tmp_path) -> None:
    from contextos_lab.schemas import InsightCluster

    layers = LayerRegistry(tmp_path / "layers")
    cluster = next(
        c for c in seeded.list(InsightCluster) if c.override_reason_class == "runaway_loop"
    )
    first = compile_insight(cluster)
    seeded.append(first)
    _release(seeded, first, layers)
    clash = first.model_copy(
        update={
            "rule_id": "str_2026_05_01_clash",
            "adjustment": first.adjustment.model_copy(
                update={"value": {**first.adjustment.value, "max_steps": 45}}
            ),
        }
    )
    seeded.append(clash)
    with pytest.raises(ReleaseRefused, match=r"lint: .*max_steps"):
        _release(seeded, clash, layers)
    # releasing it as the declared successor is allowed, and supersedes the first
    released, live, _ = _release(seeded, clash, layers, supersedes=first.rule_id)
    assert first.rule_id not in live.rules and released.rule_id in live.rules
    assert seeded.get(StrategyRule, first.rule_id).status == "superseded"


def test_release_refuses_unsigned_or_forged_reviews(seeded, tmp_path) -> None:
    from contextos_lab.schemas import InsightCluster

    cluster = next(iter(seeded.list(InsightCluster)))
    rule = compile_insight(cluster)
    seeded.append(rule)
    layers = LayerRegistry(tmp_path / "layers")
    signed = sign_reviews(seeded, rule.rule_id, REVIEWERS)

    verdict = run_layer_replay(rule, layers, store=seeded)

    def release(reviews):
        return release_layer_rule(
            rule,
            "cc",
            reviews,
            verdict=verdict,
            feedback_ids=("fb_x",),
            store=seeded,
            layers=layers,
        )

    with pytest.raises(ReleaseRefused, match="plain str, not a signed ReviewVerdict"):
        release(dict.fromkeys(REVIEWERS, "approve"))
    forged = signed["compliance"].model_copy(update={"reviewer": "lin"})
    with pytest.raises(ReleaseRefused, match="is forged"):
        release({**signed, "compliance": forged})
    with pytest.raises(ReleaseRefused, match="signature does not verify"):
        release_layer_rule(
            rule,
            "cc",
            signed,
            verdict=verdict,
            feedback_ids=("fb_x",),
            store=seeded,
            layers=layers,
            key=b"another-key",  # verdicts signed with the store key do not verify under it
        )
    with pytest.raises(ReleaseRefused, match="no signed security review"):
        release({k: v for k, v in signed.items() if k != "security"})
    assert layers.active(rule.adjustment.layer.value).rules == {}


def _cluster(store: ExperienceStore, reason: str):
    from contextos_lab.schemas import InsightCluster

    return next(c for c in store.list(InsightCluster) if c.override_reason_class == reason)


@pytest.mark.parametrize(("reason", "layer"), sorted(LAYERS.items(), key=lambda kv: kv[1]))
def test_each_layer_rule_is_replayed_on_its_goldens_before_release(
    seeded, tmp_path, reason, layer
) -> None:
    """Seed 000 Step 4 for a layer rule: the project's LAYER_<layer> goldens replayed on the
    pinned (live) layer version and with the rule; the corrected traces change to the expected
    outcome, the rest do not; release refuses without that clean verdict."""
    layers = LayerRegistry(tmp_path / "layers")
    rule = compile_insight(_cluster(seeded, reason))
    seeded.append(rule)
    with pytest.raises(ReleaseRefused, match="no replay verdict"):
        _release(seeded, rule, layers, verdict=None)
    verdict = run_layer_replay(rule, layers, store=seeded)
    assert verdict.proposal_id == rule.rule_id and verdict.status == "replay_clean"
    assert verdict.goldens_total == 4 and verdict.changed_to_expected == 2
    assert verdict.unchanged_baseline == 2 and verdict.changed_unexpected == 0
    assert verdict.scorecards_delta.policy >= 0 and verdict.scorecards_delta.safety >= 0
    assert verdict.scorecards_delta.utility == 0.5  # two of four goldens now match operators
    assert seeded.get(type(verdict), verdict.verdict_id) == verdict
    released, live, _ = _release(seeded, rule, layers, verdict=verdict)
    assert released.lineage.replay_verdict_id == verdict.verdict_id
    assert rule.rule_id in live.rules
    # replayed again on the new live version (the rule already in it): nothing changes
    again = run_layer_replay(rule, layers)
    assert again.status == "replay_partial" and again.changed_to_expected == 0


def test_a_layer_rule_that_changes_a_protected_golden_is_a_regression(seeded, tmp_path) -> None:
    layers = LayerRegistry(tmp_path / "layers")
    rule = compile_insight(_cluster(seeded, "runaway_loop"))
    tight = rule.model_copy(
        update={
            "rule_id": "str_2026_10_30_tight1",
            "adjustment": rule.adjustment.model_copy(update={"value": {"max_steps": 10}}),
        }
    )
    seeded.append(tight)
    verdict = run_layer_replay(tight, layers, store=seeded)
    assert verdict.status == "replay_regression" and verdict.changed_unexpected == 2
    assert verdict.scorecards_delta.utility == 0.0  # two corrected traces fixed, two broken
    with pytest.raises(ReleaseRefused, match="replay status replay_regression"):
        _release(seeded, tight, layers, verdict=verdict)
    assert layers.active("budget_allocation").rules == {}


def test_a_verdict_for_another_rule_does_not_release_this_one(seeded, tmp_path) -> None:
    layers = LayerRegistry(tmp_path / "layers")
    a = compile_insight(_cluster(seeded, "runaway_loop"))
    b = compile_insight(_cluster(seeded, "destructive_command"))
    seeded.append_many([a, b])
    verdict_a = run_layer_replay(a, layers, store=seeded)
    with pytest.raises(ReleaseRefused, match=f"is for {a.rule_id}"):
        _release(seeded, b, layers, verdict=verdict_a)


def test_a_project_without_a_layer_replayer_is_refused_loudly(tmp_path) -> None:
    """A copy of the bundled refund project (a memory_recall arm) without its layer replayer."""
    import shutil

    from contextos_lab.domain import BUNDLED_PROJECT, load_project
    from contextos_lab.proposals.compile.compilers import compile_strategy_rule
    from tests.factories import decision_record as rec

    shutil.copytree(BUNDLED_PROJECT, tmp_path / "refund")
    (tmp_path / "refund" / "harness" / "layer_replay.py").unlink()
    project = load_project(tmp_path / "refund")
    cluster_rule = compile_strategy_rule.__name__  # the compiler exists for any project
    assert cluster_rule
    layer_rule = StrategyRule(
        rule_id="str_2026_05_01_mem1",
        applies_to={"intent": rec().decision_key},
        trigger={"from_insight": "ins_2026_05_01_x1"},
        adjustment={"layer": "memory_recall", "type": "correction_recall", "value": {}},
    )
    with pytest.raises(LayerReplayError, match="no layer replayer"):
        run_layer_replay(layer_rule, LayerRegistry(tmp_path / "layers"), project=project)


def test_a_replay_on_an_older_layer_version_is_stale(seeded, tmp_path) -> None:
    """Like a policy patch whose pinned bundle moved: the layer changed after the replay."""
    from contextos_lab.proposals.release.layer_registry import LayerState

    layers = LayerRegistry(tmp_path / "layers")
    rule = compile_insight(_cluster(seeded, "destructive_command"))
    seeded.append(rule)
    verdict = run_layer_replay(rule, layers, store=seeded)
    live = layers.active("tool_selection")
    layers.publish(LayerState("tool_selection", 2, {**live.rules}), "someone", "out of band")
    with pytest.raises(ReleaseRefused, match="layer changed since the replay"):
        _release(seeded, rule, layers, verdict=verdict)
    fresh = run_layer_replay(rule, layers, store=seeded)
    released, _, baseline = _release(seeded, rule, layers, verdict=fresh)
    assert released.status == "released" and baseline.version == 2
