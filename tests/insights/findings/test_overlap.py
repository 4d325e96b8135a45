"""Insights standing for (nearly) the same runs are one insight."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.findings import Candidate, containment, control_fdr, merge_overlapping
from contextos_lab.insights.findings.checks import overlapping_pairs
from tests.insights.findings.test_fdr import insight


def ids(*xs: object) -> frozenset[str]:
    return frozenset(str(x) for x in xs)


def test_containment_not_jaccard_decides() -> None:
    a, b = ids(*range(10)), ids(*range(8), "x")
    assert containment(a, b) == 8 / 9  # Jaccard would be 8 / 11 < 0.8 and keep both
    assert containment(a, ids("y")) == 0.0 and containment(frozenset(), a) == 0.0


def test_overlapping_insights_merge_into_the_strongest() -> None:
    members = [ids(*range(10)), ids(*range(8), "x"), ids(*range(20, 30)), ids(*range(3))]
    cands = control_fdr(
        [
            Candidate(insight(0, 0.2), members[0]),
            Candidate(insight(1, 0.001), members[1]),
            Candidate(insight(2, 0.01), members[2]),
            Candidate(insight(3, 0.001, family="other"), members[3]),  # another source
        ]
    )
    assert len(overlapping_pairs([c.insight for c in cands], [c.members for c in cands])) == 1
    kept = merge_overlapping(cands)
    assert [c.insight.insight_id for c in kept] == [
        cands[1].insight.insight_id,
        cands[2].insight.insight_id,
        cands[3].insight.insight_id,
    ]
    (absorbed,) = kept[0].insight.support["merged"]
    assert absorbed["insight_id"] == cands[0].insight.insight_id
    assert absorbed["overlap"] == round(8 / 9, 4) and absorbed["p_value"] == 0.2
    assert "containment" in kept[0].insight.support["merge_rule"]
    assert overlapping_pairs([c.insight for c in kept], [c.members for c in kept]) == []


def test_merging_is_transitive_free_no_two_survivors_overlap() -> None:
    """A chain a ⊃ b ⊃ c: everything joins the first kept insight it overlaps."""
    chain = [ids(*range(20)), ids(*range(16)), ids(*range(13))]
    kept = merge_overlapping(
        control_fdr([Candidate(insight(i, 0.01 * (i + 1)), m) for i, m in enumerate(chain)])
    )
    assert len(kept) == 1 and len(kept[0].insight.support["merged"]) == 2


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.frozensets(st.integers(0, 12), min_size=1, max_size=10),
            st.one_of(st.none(), st.floats(0.0, 1.0)),
            st.sampled_from(["a", "b"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_no_two_survivors_overlap_and_nothing_is_lost(rows) -> None:
    cands = control_fdr(
        [
            Candidate(insight(i, p, family), frozenset(f"{family}{m}" for m in members))
            for i, (members, p, family) in enumerate(rows)
        ]
    )
    kept = merge_overlapping(cands)
    pairs = overlapping_pairs([c.insight for c in kept], [c.members for c in kept])
    assert pairs == []
    accounted = [c.insight.insight_id for c in kept] + [
        m["insight_id"] for c in kept for m in c.insight.support.get("merged", ())
    ]
    assert sorted(accounted) == sorted(c.insight.insight_id for c in cands)


def test_a_merged_mechanism_keeps_its_count_of_low_confidence_members() -> None:
    """A mechanism insight absorbed by another lost `low_confidence_members`: the report no
    longer said how many of its runs rest on a low-confidence attribution."""
    members = ids(*range(10))
    cands = control_fdr(
        [
            Candidate(insight(0, 0.001), members),
            Candidate(insight(1, None, low_confidence_members=4), members),
            Candidate(insight(2, None), ids(*range(9))),
        ]
    )
    (kept,) = merge_overlapping(cands)
    merged = {m["insight_id"]: m for m in kept.insight.support["merged"]}
    assert merged[cands[1].insight.insight_id]["low_confidence_members"] == 4
    assert "low_confidence_members" not in merged[cands[2].insight.insight_id]
