"""Release paths for all six adjustment layers: compile (the coding_agent project's table), lint
against active rules at the release gate, release with a pinned layer baseline, roll back."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.domain import use_project
from contextos_lab.insights.synthesize import synthesize_insights
from contextos_lab.proposals.bundle_registry import BundleRegistry
from contextos_lab.proposals.compilers import compile_insight
from contextos_lab.proposals.layer_release import LayerRegistry, release_layer_rule
from contextos_lab.proposals.release import ReleaseRefused, lineage_feedback_ids, rollback
from contextos_lab.proposals.reviews import sign_reviews
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


@pytest.fixture
def coding_project():
    previous = use_project(PROJECT)
    yield
    use_project(previous)


@pytest.fixture
def seeded(tmp_path: Path, coding_project) -> ExperienceStore:
    store = ExperienceStore(f"sqlite:///{tmp_path}/s.db", authorised_overriders=["ada", "lin"])
    records, feedback = [], []
    for c, reason in enumerate(LAYERS):
        for j in range(5):
            i = c * 10 + j
            rec = decision_record(i, decision_key="code.change.merge", intent="code.change")
            records.append(rec)
            feedback.append(feedback_entry(i, rec, override_reason_class=reason, signed_by="ada"))
    store.append_many(records)
    store.append_many(feedback)
    synthesize_insights(feedback, store=store)
    return store


REVIEWERS = {"compliance": "ada", "reliability": "lin", "security": "ada"}


def _release(store, rule, layers, **kw):
    reviews = sign_reviews(store, rule.rule_id, REVIEWERS)
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
                update={"value": {**first.adjustment.value, "max_steps": 99}}
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

    def release(reviews):
        return release_layer_rule(
            rule, "cc", reviews, feedback_ids=("fb_x",), store=seeded, layers=layers
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
            feedback_ids=("fb_x",),
            store=seeded,
            layers=layers,
            key=b"another-key",  # verdicts signed with the store key do not verify under it
        )
    with pytest.raises(ReleaseRefused, match="no signed security review"):
        release({k: v for k, v in signed.items() if k != "security"})
    assert layers.active(rule.adjustment.layer.value).rules == {}
