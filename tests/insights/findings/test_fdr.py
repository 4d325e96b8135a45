"""Only findings that hold: Benjamini–Hochberg within a source decides what is a finding."""

from __future__ import annotations

import pytest
from statsmodels.stats.multitest import multipletests

from contextos_lab.harness.reference.synthetic_feedback import support_desk
from contextos_lab.insights.findings import Candidate, control_fdr, hold
from contextos_lab.insights.findings.checks import below_fdr_shown_as_findings
from contextos_lab.insights.runs.insights import find_run_insights, runs_frame
from contextos_lab.schemas import Insight, InsightKind
from tests.insights.findings.records import T0


def insight(n: int, p: float | None, family: str = "src", **support) -> Insight:
    test = "proportions_ztest" if p is not None else "none: no successful baseline"
    return Insight(
        insight_id=f"ins_2026_05_01_{n:04d}",
        kind=InsightKind.failure_cluster,
        intent="k",
        pattern=f"pattern {n}",
        occurrences=5,
        first_seen=T0,
        last_seen=T0,
        confidence=0.5,
        support={
            "family": family,
            "p_value": p,
            "test": test,
            "rate": 0.5,
            "baseline_rate": 0.1,
            "hits_in": 5,
            "n_in": 10,
            "hits_out": 1,
            "n_out": 10,
            **support,
        },
    )


def test_p_below_alpha_but_above_the_bh_threshold_is_not_a_finding() -> None:
    pvals = [0.001, 0.02, 0.04, 0.045, 0.3]
    held = control_fdr([Candidate(insight(i, p), frozenset({str(i)})) for i, p in enumerate(pvals)])
    _, q, _, _ = multipletests(pvals, alpha=0.05, method="fdr_bh")
    got = [c.insight for c in held]
    assert [i.support["q_value"] for i in got] == pytest.approx(list(q))
    # p = 0.04 and 0.045 pass an unadjusted 0.05, yet their q is 0.05625: exploratory
    assert [i.support["standing"] for i in got] == ["finding", "finding"] + ["exploratory"] * 3
    assert "above the FDR threshold" in got[2].support["standing_reason"]
    assert [i.confidence for i in got] == pytest.approx([1 - x for x in q])
    assert got[2].support["test_statement"].startswith("rate 0.5 (5/10) vs 0.1 (1/10)")


def test_untested_insights_are_exploratory_with_no_confidence() -> None:
    (c,) = control_fdr([Candidate(insight(1, None, share_of_failures=0.4), frozenset({"a"}))])
    assert c.insight.confidence == 0.0 and c.insight.support["q_value"] is None
    assert c.insight.support["standing"] == "exploratory"
    assert c.insight.support["test_statement"].startswith("exploratory: no successful baseline")


def test_each_source_is_its_own_family() -> None:
    """Adding another source's tests never moves a source's q-values."""
    alone = control_fdr([Candidate(insight(1, 0.01, "a"), frozenset({"x"}))])
    beside = control_fdr(
        [Candidate(insight(1, 0.01, "a"), frozenset({"x"}))]
        + [Candidate(insight(10 + i, 0.5, "b"), frozenset({f"y{i}"})) for i in range(20)]
    )
    assert alone[0].insight.support["q_value"] == beside[0].insight.support["q_value"] == 0.01
    assert beside[0].insight.support["fdr"]["tests_in_family"] == 1


def test_shown_findings_survive_an_independent_bh_on_the_generator() -> None:
    records, feedback = support_desk(600, 7)
    shown = find_run_insights(runs_frame(records, feedback))
    assert any(i.support["standing"] == "finding" for i in shown)
    assert below_fdr_shown_as_findings(shown) == []
    for i in shown:
        q = i.support["q_value"]
        assert (i.support["standing"] == "finding") == (q is not None and q <= 0.05)
        assert i.confidence == pytest.approx(0.0 if q is None else 1 - q)


def test_the_check_catches_a_finding_that_does_not_hold() -> None:
    pvals = [0.04, 0.3]
    held = list(hold([Candidate(insight(i, p), frozenset({str(i)})) for i, p in enumerate(pvals)]))
    assert below_fdr_shown_as_findings(held) == []
    forged = held[0].model_copy(update={"support": {**held[0].support, "standing": "finding"}})
    assert below_fdr_shown_as_findings([forged, held[1]]) == [forged.insight_id]


def test_groups_screened_out_by_size_count_in_the_family() -> None:
    """A pattern tested because it reached the minimum count was selected by its own statistic:
    the groups its rule considered but did not test enter BH as p = 1 (fails on the old code,
    which let a family of one test at its own p)."""
    screened = {"scope": "rule_a", "considered": 5}
    alone = control_fdr([Candidate(insight(1, 0.02), frozenset({"x"}))])
    among = control_fdr([Candidate(insight(1, 0.02, screened=screened), frozenset({"x"}))])
    assert alone[0].insight.support["standing"] == "finding"
    s = among[0].insight.support
    _, q, _, _ = multipletests([0.02, 1, 1, 1, 1], alpha=0.05, method="fdr_bh")
    assert s["q_value"] == pytest.approx(q[0]) == pytest.approx(0.1)
    assert s["fdr"]["screened_in_family"] == 4 and s["standing"] == "exploratory"
    assert "4 groups screened out by size" in s["standing_reason"]
    # two tested of the same scope: 5 considered - 2 tested = 3 screened; another scope adds its own
    two = control_fdr(
        [
            Candidate(insight(1, 0.001, screened=screened), frozenset({"x"})),
            Candidate(insight(2, 0.3, screened=screened), frozenset({"y"})),
            Candidate(
                insight(3, 0.2, screened={"scope": "rule_b", "considered": 3}), frozenset({"z"})
            ),
        ]
    )
    assert two[0].insight.support["fdr"]["screened_in_family"] == 3 + 2
    assert below_fdr_shown_as_findings([c.insight for c in two]) == []
