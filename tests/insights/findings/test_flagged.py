"""A step-speaker mismatch (the annotated step is spoken by another agent) is shown on every
insight whose runs carry it, and such runs are kept out of the annotation-derived clusters."""

from __future__ import annotations

from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.runs.insights import find_run_insights, runs_frame
from contextos_lab.insights.sources import load_sources
from tests.insights.findings.records import run

FLAG = "step 3 is spoken by Computer_terminal, not by mistake_agent WebSurfer"


def ww(i: int, flagged: bool) -> object:
    return run(
        i,
        "ww.level_1",
        True,
        source="who-and-when",
        reason_class="agent_mistake",
        mistake_agent="WebSurfer",
        phase="first_third",
        annotation_flag=FLAG if flagged else None,
    )


def test_flagged_runs_are_shown_and_left_out_of_agent_phase_clusters() -> None:
    records = [ww(i, flagged=i < 2) for i in range(7)]
    insights = find_run_insights(runs_frame(records))
    by_rule = {i.support["spec"]["rule"]: i for i in insights}
    # 7 failures on the key, 2 of them with a contradicted annotation: shown, with the reason
    level = by_rule["failure_cluster"]
    assert level.occurrences == 7 and level.support["flagged_runs"]["count"] == 2
    assert {r["flag"] for r in level.support["flagged_runs"]["runs"]} == {FLAG}
    # the agent × phase cluster counts only the 5 runs whose step the agent really spoke; it
    # lies inside the level cluster (both exploratory), so it is merged into it and listed there
    assert "agent_phase" not in by_rule
    (phase,) = [m for m in level.support["merged"] if m["spec"]["rule"] == "agent_phase"]
    assert phase["occurrences"] == 5 and phase["overlap"] == 1.0


def test_the_flag_reaches_the_insights_frame() -> None:
    loaded = load_sources("synthetic:10:1")
    loaded.records = [ww(i, flagged=i < 2) for i in range(7)]
    frame = analyse(loaded, heldout_fraction=0.0, text_backend=None).insights_frame()
    assert frame["flagged_runs"].max() == 2
