"""Seed 002: step 0.1, clamp ±0.3, decay 0.99 per read, JSON persistence, explanation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.reference.router import route
from contextos_lab.memory.routing_feedback import (
    DEFAULT_PATH,
    RoutingFeedbackStore,
    explain_boost,
    normalize_query,
)


@pytest.fixture
def store(tmp_path: Path) -> RoutingFeedbackStore:
    return RoutingFeedbackStore(tmp_path / ".memory" / "routing_feedback.json")


def test_seed_constants_and_default_path() -> None:
    assert RoutingFeedbackStore.MIN_SCORE == -0.3
    assert RoutingFeedbackStore.MAX_SCORE == 0.3
    assert RoutingFeedbackStore.DECAY_FACTOR == 0.1
    assert RoutingFeedbackStore.TIME_DECAY_RATE == 0.99
    assert Path(".memory/routing_feedback.json") == DEFAULT_PATH


def test_each_success_adds_step_and_failure_subtracts(store: RoutingFeedbackStore) -> None:
    assert store.record_feedback("commit code", "git", True) == pytest.approx(0.1)
    assert store.record_feedback("commit code", "git", True) == pytest.approx(0.2)
    assert store.record_feedback("commit code", "terminal", False) == pytest.approx(-0.1)


def test_clamped_to_plus_minus_point_three(store: RoutingFeedbackStore) -> None:
    for _ in range(5):
        top = store.record_feedback("commit code", "git", True)
        bottom = store.record_feedback("commit code", "terminal", False)
    assert top == pytest.approx(0.3)
    assert bottom == pytest.approx(-0.3)


def test_decay_applies_per_read_and_persists(store: RoutingFeedbackStore) -> None:
    store.record_feedback("commit code", "git", True)
    assert store.get_boost("commit code", "git") == pytest.approx(0.099)
    assert store.get_boost("commit code", "git") == pytest.approx(0.09801)
    assert store.peek("commit code", "git") == pytest.approx(0.09801)  # peek does not decay
    assert store.peek("commit code", "git") == pytest.approx(0.09801)
    reopened = RoutingFeedbackStore(store.path)
    assert reopened.peek("commit code", "git") == pytest.approx(0.09801)


def test_survives_restart_in_the_seed_format(store: RoutingFeedbackStore) -> None:
    store.record_feedback("Commit  code!", "git", True)
    store.record_feedback("commit code", "git", True)
    store.record_feedback("commit code", "terminal", False)
    store.record_feedback("write documentation", "documentation", True)
    assert store.path is not None
    data = json.loads(store.path.read_text())
    assert data == {
        "commit code": {"git": pytest.approx(0.2), "terminal": pytest.approx(-0.1)},
        "write documentation": {"documentation": pytest.approx(0.1)},
    }
    assert RoutingFeedbackStore(store.path).peek("commit code", "git") == pytest.approx(0.2)
    assert [p.name for p in store.path.parent.iterdir()] == ["routing_feedback.json"]


def test_unknown_pairs_have_no_boost(store: RoutingFeedbackStore) -> None:
    assert store.get_boost("never seen", "git") == 0.0
    assert not store.path.exists()  # type: ignore[union-attr]


def test_normalisation_ignores_case_punctuation_and_order_ids() -> None:
    assert normalize_query("Where is order O-12345?") == normalize_query("where is  ORDER o-999")
    assert normalize_query("Commit  Code!") == "commit code"


def test_non_ascii_queries_get_their_own_keys() -> None:
    """Japanese and umlauts used to normalise to "" / "r ckerstattung": one shared key."""
    assert normalize_query("注文をキャンセル") == "注文をキャンセル"
    assert normalize_query("返金してください") == "返金してください"
    assert normalize_query("Rückerstattung, bitte!") == "rückerstattung bitte"
    assert normalize_query("RÜCKERSTATTUNG bitte") == "rückerstattung bitte"
    assert normalize_query("Rückerstattung") != normalize_query("Rckerstattung")
    assert normalize_query("Ｃｏｍｍｉｔ Code") == "commit code"  # NFKC: full-width letters
    assert normalize_query("Wo ist Bestellung O-12345?") == "wo ist bestellung"
    assert normalize_query("注文 12345 をキャンセル") == "注文 をキャンセル"


def test_non_ascii_feedback_does_not_leak_across_queries(store: RoutingFeedbackStore) -> None:
    store.record_feedback("注文をキャンセル", "cancellations", True)
    assert store.get_boost("返金してください", "cancellations") == 0.0
    assert store.get_boost("注文をキャンセル", "cancellations") == pytest.approx(0.1 * 0.99)
    store.record_feedback("Rückerstattung", "refunds", False)
    assert store.peek("Rckerstattung", "refunds") == 0.0
    assert store.peek("RÜCKERSTATTUNG", "refunds") == pytest.approx(-0.1)
    assert "" not in store.snapshot()


@pytest.mark.parametrize("query", ["12345", "  4711 0815 ", "!!!", "", "１２３"])
def test_a_query_without_letters_is_never_recorded_or_looked_up(
    store: RoutingFeedbackStore, query: str
) -> None:
    assert normalize_query(query) == ""
    assert store.record_feedback(query, "refunds", True) == 0.0
    assert store.get_boost(query, "refunds") == 0.0
    assert store.peek(query, "refunds") == 0.0
    assert store.snapshot() == {}
    assert store.path is not None and not store.path.exists()
    # nor is a shared "" key from an older file ever reached
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(json.dumps({"": {"refunds": 0.3}, "refund": {"refunds": 0.2}}))
    old = RoutingFeedbackStore(store.path)
    assert old.get_boost(query, "refunds") == 0.0
    assert old.get_boost("Refund!", "refunds") == pytest.approx(0.2 * 0.99)


def test_router_explains_the_reinforcement(tmp_path: Path) -> None:
    store = RoutingFeedbackStore(tmp_path / "fb.json")
    store.record_feedback("When will order 4411 get here?", "orders", True)
    decision = route("When will order 9876 get here?", store, min_confidence=0.45)
    assert decision.skill == "orders"
    assert "(Reinforced by past success +0.10)" in decision.explanation
    assert decision.confidence == pytest.approx(0.4 + 0.099)
    assert explain_boost(0.0) == ""


def test_boost_lifts_a_low_confidence_route_over_the_escalation_line(tmp_path: Path) -> None:
    store = RoutingFeedbackStore(tmp_path / "fb.json")
    assert route("Cancel it please", store, min_confidence=0.45).skill is None
    store.record_feedback("Cancel it please", "cancellations", True)
    assert route("Cancel it please", store, min_confidence=0.45).skill == "cancellations"


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(st.tuples(st.sampled_from(["a", "b"]), st.booleans(), st.booleans()),
                    max_size=40),
    step=st.sampled_from([0.05, 0.1, 0.2]),
    clamp=st.sampled_from([0.1, 0.3]),
)
def test_scores_never_leave_the_clamp(
    events: list[tuple[str, bool, bool]], step: float, clamp: float
) -> None:
    store = RoutingFeedbackStore(None, step=step, clamp=clamp)
    for skill, success, read in events:
        score = store.record_feedback("q", skill, success)
        assert -clamp - 1e-12 <= score <= clamp + 1e-12
        if read:
            assert abs(store.get_boost("q", skill)) <= clamp * 0.99 + 1e-12
