"""`analyse` splits feedback by trace id with the declared SplitSpec and reports feedback whose
trace has no decision record (instead of using the held-out split, or dropping it silently)."""

from __future__ import annotations

import json

from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import Loaded, load_sources
from contextos_lab.insights.split import HELDOUT, SEARCH
from tests.factories import decision_record, feedback_entry


def test_without_records_discovery_sees_only_the_search_split_of_feedback() -> None:
    feedback = [feedback_entry(i) for i in range(60)]
    report = analyse(Loaded(feedback=feedback), text_backend=None)
    split = {f.id: report.split.of(f.trace_id) for f in feedback}
    assert set(split.values()) == {SEARCH, HELDOUT}
    [cluster] = report.clusters
    assert set(cluster.feedback_ids) == {i for i, s in split.items() if s == SEARCH}
    assert cluster.count == sum(s == SEARCH for s in split.values())
    # none of it has a record: all of it is reported, with its split
    unmatched = report.feedback_without_record
    assert dict(zip(unmatched["feedback_id"], unmatched["split"], strict=True)) == split


def test_feedback_whose_trace_has_no_record_is_reported_not_dropped() -> None:
    records = [decision_record(i) for i in range(60)]
    with_record = [feedback_entry(i, r) for i, r in enumerate(records)]
    orphans = [
        feedback_entry(100 + i, decision_record(100 + i), id=f"fb_2026_05_09_o{i}")
        for i in range(20)
    ]
    report = analyse(Loaded(records=records, feedback=with_record + orphans), text_backend=None)
    unmatched = report.feedback_without_record
    assert sorted(unmatched["feedback_id"]) == sorted(f.id for f in orphans)
    assert set(unmatched["trace_id"]) == {f.trace_id for f in orphans}
    assert list(unmatched["split"]) == [report.split.of(f.trace_id) for f in orphans]
    # the search-split orphans still count towards discovery; held-out ones never do
    [cluster] = report.clusters
    every = with_record + orphans
    assert set(cluster.feedback_ids) == {
        f.id for f in every if report.split.of(f.trace_id) == SEARCH
    }
    as_json = json.loads(json.dumps(report.to_json(), default=str))
    assert {r["feedback_id"] for r in as_json["feedback_without_record"]} == {f.id for f in orphans}
    assert analyse(Loaded(records=records, feedback=with_record)).feedback_without_record.empty


def test_timeline_counts_each_run_insight_per_day() -> None:
    report = analyse(load_sources(["synthetic:600:3"]), text_backend=None)
    timeline = report.timeline()
    run_insights = [i for i in report.insights if i.support.get("source") == "runs"]
    labels = [f"{i.pattern} ({i.insight_id})" for i in run_insights]
    assert run_insights and list(timeline.columns) == labels
    days = report.runs.set_index("record_id")["decided_at"].dt.floor("D")
    for insight, label in zip(run_insights, labels, strict=True):
        cited = days.reindex(list(insight.evidence_refs)).dropna()
        assert timeline[label].sum() == len(cited) > 0
