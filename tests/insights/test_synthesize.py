from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.synthesize import (
    cluster_frame,
    insights_from_clusters,
    synthesize_insights,
)
from contextos_lab.schemas import DecisionRecord, FeedbackEntry, TerminalStatus
from contextos_lab.schemas.feedback import ExpectedOutcome
from contextos_lab.schemas.ids import new_id
from contextos_lab.store import ExperienceStore

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def entry(i: int, key: str, reason: str, *, hours: int = 0, refs=(), overrides=None, sup=None):
    at = T0 + timedelta(hours=hours)
    return FeedbackEntry(
        id=f"fb_{i:06d}",
        trace_id=f"t{i}",
        decision_record_id=f"dr_{i:06d}",
        decision_key=key,
        override_kind="modify",
        override_reason_class=reason,
        expected_outcome=ExpectedOutcome(field_overrides=overrides or {}),
        evidence_refs_seen=tuple(refs),
        signed_by="op",
        signed_at=at,
        supersedes=sup,
    )


def test_groups_below_five_are_dropped_and_fields_are_exact() -> None:
    k, r = "support.refund.execute", "refund_window_misjudged"
    big = [
        entry(
            i,
            k,
            r,
            hours=10 - i,
            refs=("ev:a", "ev:b") if i < 3 else ("ev:a",),
            overrides={"window_days": 30} if i < 4 else {"window_days": 14},
        )
        for i in range(6)
    ]
    small = [entry(100 + i, k, "evidence_missing") for i in range(4)]
    clusters = synthesize_insights(big + small)
    assert len(clusters) == 1
    c = clusters[0]
    assert (c.decision_key, c.override_reason_class, c.count) == (k, r, 6)
    # ids ordered by signed_at: entry 5 is earliest (hours=5), entry 0 latest (hours=10)
    assert c.feedback_ids == tuple(f"fb_{i:06d}" for i in (5, 4, 3, 2, 1, 0))
    assert c.earliest == T0 + timedelta(hours=5) and c.latest == T0 + timedelta(hours=10)
    assert c.representative_evidence_refs == ("ev:a", "ev:b")  # ev:b in 3 of 6 = half
    assert c.representative_field_overrides == {"window_days": 30}


def test_min_cluster_size_may_be_raised_never_lowered() -> None:
    entries = [entry(i, "k.a", "wrong_tool") for i in range(6)]
    with pytest.raises(ValueError, match="never lowered"):
        synthesize_insights(entries, min_cluster_size=4)
    assert synthesize_insights(entries, min_cluster_size=7) == []
    assert len(synthesize_insights(entries, min_cluster_size=6)) == 1


def test_since_and_superseded_entries() -> None:
    entries = [entry(i, "k.a", "wrong_tool", hours=i) for i in range(6)]
    assert synthesize_insights(entries, since=T0 + timedelta(hours=1))[0].count == 5
    assert synthesize_insights(entries, since=T0 + timedelta(hours=2)) == []
    # fb_000000 is corrected by a later entry: it no longer counts for wrong_tool
    corrected = [*entries, entry(50, "k.a", "wrong_arguments", hours=9, sup="fb_000000")]
    (cluster,) = synthesize_insights(corrected)
    assert cluster.count == 5 and "fb_000000" not in cluster.feedback_ids
    assert synthesize_insights(corrected, drop_superseded=False)[0].count == 6


def test_ids_are_deterministic() -> None:
    entries = [entry(i, "k.a", "wrong_tool") for i in range(5)]
    assert synthesize_insights(entries)[0].insight_id == synthesize_insights(entries)[0].insight_id


def test_grouping_is_vectorised_not_a_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear-scaling sanity without timing: the per-entry path goes through groupby codes, so
    FeedbackEntry objects are never iterated once the frame exists."""
    from contextos_lab.harness.reference.synthetic_feedback import feedback_frame_fast

    frame = feedback_frame_fast(20_000, seed=1, n_keys=4, n_classes=3)
    out = cluster_frame(frame)
    assert int(out["count"].sum()) == 20_000
    assert len(out) == 12


KEYS = st.sampled_from(["a.x", "a.y", "b.z"])
REASONS = st.sampled_from(["wrong_tool", "evidence_missing", "pii_exposed"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(KEYS, REASONS, st.integers(0, 500)), max_size=60))
def test_matches_a_naive_reference(rows) -> None:
    entries = [entry(i, k, r, hours=h) for i, (k, r, h) in enumerate(rows)]
    groups: dict[tuple[str, str], list[FeedbackEntry]] = {}
    for e in entries:  # the seed's loop, verbatim in spirit
        groups.setdefault((e.decision_key, e.override_reason_class), []).append(e)
    expected = {
        key: (
            len(g),
            min(e.signed_at for e in g),
            max(e.signed_at for e in g),
            Counter(e.id for e in g),
        )
        for key, g in groups.items()
        if len(g) >= 5
    }
    got = {
        (c.decision_key, c.override_reason_class): (
            c.count,
            c.earliest,
            c.latest,
            Counter(c.feedback_ids),
        )
        for c in synthesize_insights(entries)
    }
    assert got == expected


def test_store_write_records_upstream_feedback(tmp_path) -> None:
    store = ExperienceStore(f"sqlite:///{tmp_path}/s.db", authorised_overriders=["op"])
    records, entries = [], []
    for i in range(5):
        dr = DecisionRecord(
            record_id=f"dr_{i:06d}",
            trace_id=f"t{i}",
            decision_key="k.a",
            status=TerminalStatus.failed,
            decision="deny",
            decided_at=T0,
        )
        records.append(dr)
        entries.append(entry(i, "k.a", "wrong_tool"))
    store.append_many([*records, *entries])
    clusters = synthesize_insights(entries, store=store)
    row = next(store.rows(kind="insight_cluster"))
    assert set(row.upstream_ids) == {e.id for e in entries}
    assert row.upstream_sha256 is not None
    assert store.verify().ok
    # deterministic ids: a re-run is unchanged, not a second row
    synthesize_insights(entries, store=store)
    assert store.count("insight_cluster") == 1 == len(clusters)


def test_cluster_insights_carry_computed_support() -> None:
    entries = [entry(i, "k.a", "wrong_tool", hours=i) for i in range(6)]
    entries += [entry(100 + i, "k.b", "evidence_missing", hours=i) for i in range(6)]
    insights = insights_from_clusters(synthesize_insights(entries), entries)
    assert len(insights) == 2
    for i in insights:
        assert i.support["rate"] == 1.0 and i.support["baseline_rate"] == 0.0
        # two tests with the same p: Benjamini-Hochberg leaves q = p; confidence is 1 - q
        assert i.support["q_value"] == pytest.approx(i.support["p_value"])
        assert i.confidence == pytest.approx(1 - i.support["q_value"])
        assert i.support["fdr"]["tests_in_family"] == 2
        assert i.support["rule"].startswith("typed feedback cluster")


def test_new_id_shape() -> None:
    assert new_id("ins", at=T0, seed="x").startswith("ins_2026_05_01_")
