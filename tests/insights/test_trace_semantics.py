"""What the analysis says on trace exports: content-detected formats, rename invariance, one
observation per failed run, contrast only against a successful baseline, no made-up time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.pipeline import analyse, write_report
from contextos_lab.insights.runs.insights import find_run_insights, modal_path, runs_frame
from contextos_lab.insights.sources import load_sources, sniff
from contextos_lab.loaders.detect import detect
from contextos_lab.schemas.clock import NO_CLOCK

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau_bench_airline_small.json"
WW = FIXTURES / "who_and_when_small.json"
OTLP = FIXTURES / "otlp_genai_small.json"


def test_formats_are_detected_from_content_whatever_the_name(tmp_path: Path) -> None:
    for src, misleading, kind in [
        (TAU, "who_and_when_otlp.json", "tau-bench"),
        (WW, "tau_restaurant_trajectories.json", "who-and-when"),
        (OTLP, "handoff_tau.json", "otlp"),
    ]:
        target = tmp_path / misleading
        shutil.copy(src, target)
        assert detect(target) == kind
        assert sniff(target) == kind
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    assert detect(tmp_path / "notes.json") == "unknown"


def _insights_bytes(folder: Path, out: Path) -> bytes:
    report = analyse(load_sources([str(folder)]), min_cluster_size=5)
    return write_report(report, out).read_bytes()


def test_renamed_folders_give_byte_identical_insights(tmp_path: Path) -> None:
    for name in ("tau-bench", "restaurant"):
        (tmp_path / name / "Hand-Crafted").mkdir(parents=True)
        shutil.copy(TAU, tmp_path / name / "runs.json")
        shutil.copy(WW, tmp_path / name / "Hand-Crafted" / "ann.json")
    a = _insights_bytes(tmp_path / "tau-bench", tmp_path / "out_a")
    b = _insights_bytes(tmp_path / "restaurant", tmp_path / "out_b")
    assert a == b
    assert json.loads(a)["failure_table"]  # something was analysed


def test_an_annotators_correction_is_the_answer_key_not_an_observation() -> None:
    loaded = load_sources([str(WW)])
    # two of its runs carry half an annotation: analysed, one has a reason (a correction)
    assert len(loaded.records) == 4 and len(loaded.feedback) == 3
    report = analyse(loaded, min_cluster_size=5, heldout_fraction=0.0, text_backend=None)
    assert len(report.clusters) == 0 and report.text is None
    assert report.heldout["feedback_folded_into_failed_runs"] == 0  # never read as input
    assert set(report.runs["reason_class"]) == {"unclassified"}  # not the annotation's class
    # ... but kept beside the attribution to score it
    assert set(report.attributions["annotated_agent"]) == set(report.runs["mistake_agent"])


def _frame(rows: list[tuple[str, bool, tuple[str, ...]]]) -> pd.DataFrame:
    from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
    from contextos_lab.schemas.ids import new_id

    records = [
        DecisionRecord(
            record_id=new_id("dr", at=NO_CLOCK, seed=str(i)),
            trace_id=f"t{i}",
            decision_key=key,
            intent="x",
            status=TerminalStatus.failed if failed else TerminalStatus.completed,
            decision="d",
            inputs={"reason_class": "wrong_tool"} if failed else {},
            tool_calls=tools,
            decided_at=NO_CLOCK,
        )
        for i, (key, failed, tools) in enumerate(rows)
    ]
    return runs_frame(records)


def test_all_failed_keys_have_no_modal_path_and_support_is_share_of_failures() -> None:
    frame = _frame([("a.k", True, ("x",) * (i % 3)) for i in range(12)])
    assert modal_path(frame, "a.k") is None
    insights = find_run_insights(frame, min_cluster_size=5)
    assert [i.support["rule"].split()[0] for i in insights] == ["failed"]  # no detour
    (only,) = insights
    assert only.support["baseline"] == "no successful baseline"
    assert only.support["p_value"] is None and only.support["share_of_failures"] == 1.0
    lo, hi = only.support["share_ci95"]
    assert 0.7 < lo < hi == pytest.approx(1.0)
    # no test ran: no confidence, never a finding, and the all-failed rate gets no interval
    assert only.confidence == 0.0 and only.support["standing"] == "exploratory"
    assert only.support["standing_reason"] == "no successful baseline"
    assert only.support["rate_ci95"] is None and "tautological" in only.support["rate_note"]
    assert only.support["trend"]["direction"] is None  # no clock: no trend


def test_a_key_with_successes_is_contrasted_with_a_test() -> None:
    rows = [("a.k", i < 8, ("x", "y") if i < 8 else ("x",)) for i in range(20)]
    rows += [("b.k", False, ("x",)) for _ in range(20)]
    frame = _frame(rows)
    assert modal_path(frame, "a.k") == ("x",)
    insights = find_run_insights(frame, min_cluster_size=5)
    # the 8 failures are exactly the 8 runs that repeat y: one insight, the other merged in
    (only,) = insights
    assert only.support["spec"]["rule"] == "common_detour" and only.support["key"]["tool"] == "y"
    (merged,) = only.support["merged"]
    assert merged["spec"]["rule"] == "failure_cluster" and merged["overlap"] == 1.0
    assert only.support["p_value"] < 0.05 and only.support["standing"] == "finding"


def test_cluster_writes_quarantine_and_reports_the_heldout_split(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["cluster", str(TAU), str(WW), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    quarantine = out / "insights.json.quarantine.jsonl"
    rows = [json.loads(line) for line in quarantine.read_text().splitlines()]
    # partially annotated Who&When runs are analysed, not quarantined (issue 45)
    assert len(rows) == 4 and all(r["message"] and r["file"] for r in rows)
    assert f"quarantined rows and reasons: {quarantine}" in printed
    assert "held out for the gate:" in printed and "not shown" in printed


def test_cluster_exits_2_when_nothing_was_read(tmp_path, capsys) -> None:
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    assert main(["cluster", str(tmp_path / "junk.json"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "nothing to cluster" in err
    assert (tmp_path / "o" / "insights.json.quarantine.jsonl").is_file()


@pytest.mark.external
def test_real_folders_renamed_give_identical_insights(external_dir: Path, tmp_path: Path) -> None:
    outs = []
    for name in ("tau-bench-copy", "restaurant"):
        target = tmp_path / name
        shutil.copytree(external_dir / "tau-bench", target / "a")
        shutil.copytree(external_dir / "who-and-when", target / "handoff")
        report = analyse(load_sources([str(target)]), text_backend=None)
        outs.append(write_report(report, tmp_path / f"out_{name}").read_bytes())
    assert outs[0] == outs[1]


def test_quality_figures_on_the_fixtures() -> None:
    from contextos_lab.insights.exemplars import agent_phase_table, insight_exemplars
    from contextos_lab.insights.quality import (
        agent_phase_purity,
        duplicates,
        tau_action_diff_agreement,
    )

    loaded = load_sources(["synthetic:300:5", str(TAU), str(WW)])
    report = analyse(loaded, text_backend=None)
    assert report.insights and duplicates(report) == 0
    tau = tau_action_diff_agreement(report.runs)
    assert tau["failed_runs"] == 10 and tau["classes"]["wrong_arguments"] == 1
    assert tau["classes"]["state_mismatch"] == 1  # writes all matched: no write is called wrong
    purity = agent_phase_purity(report.runs)
    assert purity["annotated_runs"] == 3 and purity["purity"] == 1.0  # one without a reason
    assert list(agent_phase_table(report.runs).columns)[-1] == "total"
    failing = next(i for i in report.insights if i.support.get("source") == "runs")
    for _, excerpt in insight_exemplars(failing, report.runs, loaded.traces):
        assert "▶" in set(excerpt["failing"])


def test_text_themes_decline_on_random_words_and_split_real_themes() -> None:
    import numpy as np

    from contextos_lab.insights.text_clusters import agreement, cluster_texts

    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "sigma",
        "omega",
    ]
    rng = np.random.default_rng(0)
    noise = cluster_texts([" ".join(rng.choice(words, 6)) for _ in range(100)])
    assert noise.k == 1 and noise.decision.startswith("no structure")
    themes = ["refund window expired late return", "identity check missing passport verify"]
    texts = [f"{themes[i % 2]} {rng.choice(words)}" for i in range(40)]
    split = cluster_texts(texts, [str(i) for i in range(40)])
    assert split.k == 2 and all(len(e) == 2 for e in split.clusters["exemplars"])
    truth = {str(i): i % 2 for i in range(40)}
    assert agreement(split, truth, "theme")["nmi"] == 1.0
