from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from contextos_lab.harness.reference.synthetic_feedback import THEMES, support_desk
from contextos_lab.insights.notes.chief_of_staff import ChiefOfStaff, Signal
from contextos_lab.insights.notes.research_queue import ResearchQueue, research_candidates
from contextos_lab.insights.runs.insights import find_run_insights, runs_frame
from contextos_lab.insights.text_clusters import EmbeddingsUnavailable, cluster_texts
from contextos_lab.schemas import NoteKind, ResearchTaskStatus

NOW = datetime(2026, 5, 2, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def insights():
    records, feedback = support_desk(600, 7)
    return find_run_insights(runs_frame(records, feedback))


def test_knowledge_gaps_become_candidates_with_what_the_gate_needs(insights) -> None:
    candidates = research_candidates(insights)
    assert candidates and all(c.task.produces == "knowledge_patch" for c in candidates)
    c = next(c for c in candidates if c.pattern_spec["rule"] == "gap_detected")
    assert c.task.scope.max_external_calls == 0 and c.task.status == ResearchTaskStatus.queued
    assert c.search_counts["n_in"] > 0 and c.routing_rule == "evidence_missing"
    assert c.split["discovered_on"] == "search"


def test_execution_beyond_scope_is_refused_and_recorded(insights, tmp_path) -> None:
    candidate = research_candidates(insights, max_external_calls=2)[0]
    queue = ResearchQueue(security_log=tmp_path / "security.jsonl")
    task, result = queue.execute(candidate.task, calls_requested=3)
    assert task.status == ResearchTaskStatus.refused and result is None
    assert queue.security_events[0].calls_requested == 3
    assert "research_scope_exceeded" in (tmp_path / "security.jsonl").read_text()

    def greedy(task, budget):
        for _ in range(5):
            budget.charge()
        return "patch"

    task, _ = queue.execute(candidate.task, calls_requested=1, runner=greedy)
    assert task.status == ResearchTaskStatus.refused and len(queue.security_events) == 2
    task, out = queue.execute(candidate.task, 2, runner=lambda t, b: (b.charge(2), "ok")[1])
    assert task.status == ResearchTaskStatus.completed and out == "ok"


def test_notes_aggregate_and_respect_the_daily_budget() -> None:
    cos = ChiefOfStaff(now=NOW, budget=3)
    loops = pd.DataFrame(
        {
            "subject": [f"loop {i}" for i in range(4)],
            "opened_at": [NOW - timedelta(hours=30 + i) for i in range(4)],
            "operator": "ana",
            "ref": [f"session:s{i}" for i in range(4)],
        }
    )
    approvals = pd.DataFrame(
        {
            "gate": ["GATE_FINANCE_APPROVAL"],
            "ref": ["inv_22"],
            "requested_at": [NOW - timedelta(hours=40)],
            "decided_at": [None],
            "operator": ["ana"],
        }
    )
    queues = pd.DataFrame({"queue": ["refunds"], "depth": [50], "operator": ["ana"]})
    cards = pd.DataFrame(
        {
            "decision_key": ["k.a"],
            "metric": ["utility"],
            "target": [0.9],
            "value": [0.7],
            "operator": ["ana"],
        }
    )
    signals = cos.signals(open_loops=loops, approvals=approvals, queues=queues, scorecards=cards)
    signals.append(Signal(NoteKind.recurring_correction, "ana", NOW, "5 corrections"))
    signals.append(Signal(NoteKind.repeated_escalation, "bo", NOW, "escalations"))
    notes = cos.notes(signals)
    ana = [n for n in notes if n.operator == "ana"]
    assert len(ana) == 3  # four kinds for ana, folded into the budget
    assert sum(n.aggregated_count for n in notes) == len(signals)
    aging = next(n for n in ana if n.kind == NoteKind.open_loop_aging)
    assert aging.aggregated_count == 5  # 4 loops + 1 pending approval in one note
    assert {n.kind for n in cos.notes(signals[:1])} == {NoteKind.open_loop_aging}
    with pytest.raises(ValueError):
        ChiefOfStaff(budget=0)


def test_text_clusters_recover_planted_themes() -> None:
    texts, labels = [], []
    for theme, variants in THEMES.items():
        for i in range(6):
            texts.append(variants[i % len(variants)])
            labels.append(theme)
    got = cluster_texts(texts)
    assert got.k >= len(THEMES)  # never merges two themes; may split a theme's wordings
    purity = pd.crosstab(got.assignments["cluster"], pd.Series(labels)).max(axis=1).sum()
    assert purity >= 0.9 * len(texts)  # one carrier-proof wording shares "delivery date"
    assert all(row.top_terms and row.exemplars for row in got.clusters.itertuples())
    assert cluster_texts(texts).assignments.equals(got.assignments)  # deterministic


def test_embeddings_backend_says_how_to_install() -> None:
    pytest.importorskip("numpy")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(EmbeddingsUnavailable, match=r"\.\[embeddings\]"):
            cluster_texts(["a b", "c d", "e f"], backend="embeddings")
    with pytest.raises(ValueError, match="unknown text backend"):
        cluster_texts(["a"], backend="bert")
