"""One source's statistics never change because another source's runs sit beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.runs.insights import find_run_insights, modal_path, runs_frame
from contextos_lab.insights.sources import load_sources
from tests.insights.findings.records import run

STATS = ("p_value", "q_value", "rate", "baseline_rate", "rate_ci95", "share_ci95", "standing")


def stats(insights, family: str) -> dict[str, dict]:
    return {
        i.insight_id: {k: i.support.get(k) for k in STATS} | {"confidence": i.confidence}
        for i in insights
        if i.support.get("family") == family
    }


def test_a_source_alone_and_beside_another_has_the_same_statistics() -> None:
    # source A: every run failed (no successful baseline); source B: mixed, with successes
    a = [run(i, f"a.k{i % 2}", True, source="A") for i in range(12)]
    b = [run(100 + i, "b.k", i < 6, source="B") for i in range(20)]
    b += [run(200 + i, "b.j", i < 1, source="B") for i in range(20)]
    alone = find_run_insights(runs_frame(a))
    beside = find_run_insights(runs_frame(a + b))
    assert stats(alone, "A") and stats(alone, "A") == stats(beside, "A")
    # without B's successes next to it, A has no baseline: exploratory, never tested
    assert {i.support["standing_reason"] for i in alone} == {"no successful baseline"}
    assert stats(find_run_insights(runs_frame(b)), "B") == stats(beside, "B")


def test_modal_path_of_one_task_is_never_applied_to_another() -> None:
    # task 1 succeeds along a > b; task 2 (same key) never succeeds, its runs go a > b > b > c
    rows = [run(i, "k", i >= 6, source="S", task=1, tools=("a", "b")) for i in range(10)]
    long = ("a", "b", "b", "c")
    rows += [run(20 + i, "k", True, source="S", task=2, tools=long) for i in range(8)]
    frame = runs_frame(rows)
    assert modal_path(frame, "k#1") == ("a", "b") and modal_path(frame, "k#2") is None
    detours = [i for i in find_run_insights(frame) if i.support["spec"]["rule"] == "common_detour"]
    # the old key-level modal path (a > b) would call task 2's 8 failed runs detours on b and c
    assert detours == []


def test_a_task_is_compared_with_its_own_successes() -> None:
    rows = [run(i, "k", False, source="S", task=1, tools=("a",)) for i in range(6)]
    rows += [run(10 + i, "k", i < 5, source="S", task=1, tools=("a", "a")) for i in range(6)]
    rows += [run(30 + i, "k", False, source="S", task=2, tools=("a", "a")) for i in range(6)]
    (detour,) = [
        i
        for i in find_run_insights(runs_frame(rows))
        if i.support["spec"]["rule"] == "common_detour"
    ]
    # task 2 succeeds along a > a: its runs are not detours, though task 1's path is shorter
    assert detour.support["key"]["modal_paths"] == {"k#1": ["a"], "k#2": ["a", "a"]}
    assert detour.occurrences == 6 and detour.support["n_out"] == 12


@pytest.mark.external
def test_real_sources_in_one_folder_keep_their_statistics(external_dir: Path, tmp_path: Path):
    both = tmp_path / "both"
    shutil.copytree(external_dir / "tau-bench", both / "x")
    shutil.copytree(external_dir / "who-and-when", both / "y")
    together = analyse(load_sources(str(both)), text_backend=None).insights
    for folder, family in (("x", "tau-bench"), ("y", "who-and-when")):
        alone = analyse(load_sources(str(both / folder)), text_backend=None).insights
        assert stats(alone, family) and stats(alone, family) == stats(together, family)
