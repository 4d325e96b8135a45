"""Clusters of mechanisms: read from the trace, identical with or without annotations."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.attribution.mechanisms import display_names, mechanism_clusters
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources
from contextos_lab.loaders.detect import detect
from tests.insights.attribution.traces import annotate, group_chat_run, orchestrated_run, write_runs

SURFERS = ["WebSurfer"] * 8 + ["Websurfer"] * 6


def _raw_runs() -> list[dict]:
    return [orchestrated_run(i, s) for i, s in enumerate(SURFERS)] + [
        group_chat_run(i) for i in range(14)
    ]


def _annotated(seed: int) -> list[dict]:
    """The same runs with annotations; `seed` shuffles which run gets which annotation."""
    runs = _raw_runs()
    labels = [("Orchestrator", 1, "bad plan")] * 14 + [("Data_Expert", 1, "wrong file")] * 14
    random.Random(seed).shuffle(labels)
    return [annotate(r, *lab) for r, lab in zip(runs, labels, strict=True)]


def _clusters(report) -> list[tuple[str, tuple[str, ...]]]:
    ids = report.runs.set_index("record_id")["trace_id"]
    return [
        (row.title, tuple(sorted(ids[m] for m in row.members)))
        for row in report.mechanisms.itertuples()
    ]


def test_cluster_on_unannotated_traces_gives_attributed_mechanism_clusters(tmp_path) -> None:
    folder = write_runs(tmp_path / "runs", _raw_runs())
    assert detect(folder / "0.json") == "who-and-when"  # not "unknown": labels are optional
    out = tmp_path / "out"
    assert main(["cluster", str(folder), "--out", str(out)]) == 0
    data = json.loads((out / "insights.json").read_text())
    assert data["quarantined"] == 0
    titles = [c["title"] for c in data["mechanism_clusters"]]
    surfer = next(t for t in titles if t.startswith("WebSurfer"))
    assert "looping" in surfer and "round or time limit" in surfer
    assert surfer.startswith("WebSurfer takes a step that makes no progress")
    assert any(t.startswith("Data_Expert runs code that fails, then a missing") for t in titles)
    assert any(i["pattern"] == surfer for i in data["insights"])
    attributed = pd.DataFrame(data["attributions"])
    assert attributed["signal"].notna().all() and attributed["excerpt"].str.len().gt(0).all()
    assert attributed["annotated_agent"].isna().all()


def test_clusters_do_not_depend_on_annotations(tmp_path) -> None:
    reports = []
    for name, runs in (
        ("none", _raw_runs()),
        ("a", _annotated(0)),
        ("b", _annotated(1)),  # the annotations permuted across runs
    ):
        reports.append(analyse(load_sources([str(write_runs(tmp_path / name, runs))])))
    assert _clusters(reports[0]) == _clusters(reports[1]) == _clusters(reports[2])
    assert _clusters(reports[0])
    patterns = [sorted(i.pattern for i in r.insights) for r in reports]
    assert patterns[0] == patterns[1] == patterns[2]
    # the annotation is kept beside the attribution, as the answer key
    assert reports[1].attributions["annotated_agent"].notna().all()


def test_agent_name_variants_are_merged_in_a_cluster(tmp_path) -> None:
    report = analyse(load_sources([str(write_runs(tmp_path, _raw_runs()))]), heldout_fraction=0)
    surfer = report.mechanisms[report.mechanisms["agent"] == "WebSurfer"]
    assert len(surfer) == 1 and surfer["size"].iloc[0] == 14
    assert surfer["agent_share"].iloc[0] == 1.0  # both spellings counted as one agent
    names = display_names(report.attributions)
    assert names["websurfer"] == "WebSurfer"  # the more common spelling


def test_small_groups_fall_back_to_coarser_mechanisms_then_other() -> None:
    rows = pd.DataFrame(
        {
            "record_id": [f"r{i}" for i in range(7)],
            "agent": ["A", "a", "A", "B", "B", "B", "C"],
            "agent_key": ["a", "a", "a", "b", "b", "b", "c"],
            "role": ["agent"] * 6 + ["orchestrator"],
            "act": ["runs code that fails"] * 6 + ["directs the next step"],
            "error": [None] * 7,
            "loop": [False, False, False, True, True, True, False],
            "stall": [False] * 7,
            "ending": ["with TERMINATE"] * 7,
            "diff": [None] * 7,
        }
    )
    clusters = mechanism_clusters(rows, min_size=3)
    assert list(clusters["size"]) == [3, 3, 1]
    assert clusters["title"].iloc[-1].startswith("other mechanisms")
    assert any("looping" in t for t in clusters["title"])
    with pytest.raises(KeyError):
        mechanism_clusters(rows.drop(columns=["act"]), min_size=3)


def test_held_out_runs_are_neither_attributed_nor_clustered(tmp_path) -> None:
    report = analyse(load_sources([str(write_runs(tmp_path, _raw_runs()))]))
    search = report.runs[(report.runs["split"] == "search") & report.runs["failed"]]
    assert 0 < len(search) < len(report.runs)
    assert set(report.attributions["record_id"]) == set(search["record_id"])
    members = {m for ms in report.mechanisms["members"] for m in ms}
    assert members == set(search["record_id"])


def test_tau_bench_runs_are_attributed_from_their_calls_and_tool_results() -> None:
    from pathlib import Path

    from contextos_lab.insights.attribution.runs import attribute_runs
    from contextos_lab.insights.runs.columns import runs_frame

    tau = Path(__file__).parents[1] / "fixtures" / "tau_bench_airline_small.json"
    loaded = load_sources([str(tau)])
    runs = runs_frame(loaded.records)
    attributed = attribute_runs(loaded.traces, runs)
    assert len(attributed) == int(runs["failed"].sum())  # the run without ground truth too
    task = attributed["record_id"].map(
        runs.set_index("record_id")["inputs"].map(lambda d: d["task_id"])
    )
    cancel = attributed[task == 7].iloc[0]  # its cancel_reservation call answered an error
    assert cancel["act"] == "calls cancel_reservation" and cancel["error_steps"] == [3]
    assert cancel["diff"] == "misses an expected write"  # the stored diff, where GT exists
    assert attributed[task == 13]["diff"].isna().all()  # no ground truth, no diff


def test_the_notebooks_figures_and_confusion_table_count_search_runs_only(tmp_path) -> None:
    """The timeline and the confusion table are built from the search split's failed runs: the
    old agent × phase heatmap counted the held-out runs too (58 where the insights cover 44)."""
    from contextos_lab.insights.attribution.views import confusion, timeline_events

    report = analyse(load_sources([str(write_runs(tmp_path, _annotated(0)))]))
    search = report.runs[(report.runs["split"] == "search") & report.runs["failed"]]
    heldout = report.runs[report.runs["split"] != "search"]
    assert len(heldout) and len(search)
    events = timeline_events(report.attributions)
    assert set(events["run"]) == set(search["trace_id"])
    assert not set(events["run"]) & set(heldout["trace_id"])
    table = confusion(report.attributions)
    assert int(table.loc["total", "total"]) == len(search)


def test_the_confusion_table_merges_agent_name_variants() -> None:
    from contextos_lab.insights.attribution.views import agreement, confusion

    rows = pd.DataFrame(
        {
            "agent": ["WebSurfer", "Websurfer", "WebSurfer", "Coder"],
            "annotated_agent": ["Web Surfer", "WebSurfer", "web_surfer", None],
            "step": [3, 5, 7, 1],
            "annotated_step": [3, 4, 7, None],
        }
    )
    table = confusion(rows)
    assert list(table.index) == ["WebSurfer", "total"]
    assert list(table.columns) == ["WebSurfer", "total"]
    assert int(table.loc["WebSurfer", "WebSurfer"]) == 3  # the unannotated run is not counted
    assert agreement(rows) == {"annotated_runs": 3, "agent_accuracy": 1.0, "step_accuracy": 2 / 3}
