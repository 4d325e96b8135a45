"""Re-runs of `cluster --store` on growing data spend the error rate over looks: repetition
alone never makes a null pattern a finding, a re-run on unchanged data changes nothing, and a
finding shown at an earlier look stands."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from contextos_lab.insights.findings.fdr import ALPHA, EXPLORATORY, FINDING
from contextos_lab.insights.findings.reruns import hold_across_reruns, last_look, share
from contextos_lab.schemas.insight import Insight, InsightKind

T0 = datetime(2026, 4, 1, tzinfo=UTC)


def _insight(insight_id: str, q: float, key: str = "a") -> Insight:
    return Insight(
        insight_id=insight_id,
        kind=InsightKind.failure_cluster,
        intent="k",
        pattern="p",
        occurrences=5,
        first_seen=T0,
        last_seen=T0,
        confidence=1 - q,
        support={
            "family": "records", "rule": "r", "key": {"k": key}, "q_value": q,
            "standing": FINDING if q <= ALPHA else EXPLORATORY,
        },
    )  # fmt: skip


def test_the_shares_sum_to_one_so_the_looks_spend_alpha_once() -> None:
    assert sum(share(t) for t in range(1, 200_000)) == pytest.approx(1.0, abs=1e-5)
    assert share(1) > share(2) > share(30)


def test_a_finding_must_clear_the_threshold_of_its_look() -> None:
    first = hold_across_reruns([_insight("ins_1", 0.02)], [])
    assert first[0].support["standing"] == FINDING  # 0.02 <= 0.05 * 0.608
    assert first[0].support["rerun"]["look"] == 1
    # five looks later the same q is a day's noise, not a finding (old rule: a finding)
    stored = [_insight(f"ins_old{t}", 0.5, key="b") for t in range(4)]
    stored = [
        i.model_copy(update={"support": {**i.support, "rerun": {"look": t + 1}}})
        for t, i in enumerate(stored)
    ]
    assert last_look(stored) == 4
    later = hold_across_reruns([_insight("ins_5", 0.02)], stored)
    assert later[0].support["rerun"]["look"] == 5
    assert later[0].support["standing"] == EXPLORATORY
    assert "threshold of look 5" in later[0].support["standing_reason"]
    strong = hold_across_reruns([_insight("ins_6", 0.001)], stored)
    assert strong[0].support["standing"] == FINDING


def test_a_rerun_on_unchanged_data_changes_nothing() -> None:
    first = hold_across_reruns([_insight("ins_1", 0.02)], [])
    again = hold_across_reruns([_insight("ins_1", 0.02)], first)
    assert again == first and last_look(again) == 1


def test_an_earlier_finding_stands_at_later_looks() -> None:
    first = hold_across_reruns([_insight("ins_1", 0.01)], [])
    assert first[0].support["standing"] == FINDING
    stored = [*first, *(
        _insight(f"ins_x{t}", 0.5, key="z").model_copy(
            update={"support": {**_insight("ins_y", 0.5, key="z").support, "rerun": {"look": t}}})
        for t in range(2, 9)
    )]  # fmt: skip
    later = hold_across_reruns([_insight("ins_9", 0.03)], stored)  # same pattern, more data
    assert later[0].support["standing"] == FINDING
    assert later[0].support["rerun"]["stood_before"] is True
