"""Emission: only promote becomes a TuningProposal, only confirmed patterns a ResearchTask;
files are atomic, never overwritten, and cite the report by hash."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contextos_lab.gate.research import ResearchConfirmation, confirm
from contextos_lab.gate.run_gate import GateCandidate, GateRun
from contextos_lab.gate.verdict import GateGuardrails, decide
from contextos_lab.insights.notes.research_queue import ResearchCandidate
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources
from contextos_lab.proposals.files.emit import (
    ProposalExists,
    emit,
    report_matches,
    sha256_file,
    write_new,
)
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.tuning import TuningProposal


def _frames(n: int = 400) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(0)
    idx = pd.Index([f"h{i}" for i in range(n)], name="case_id")
    base = pd.DataFrame(
        {
            "policy": 1.0,
            "safety": 1.0,
            "utility": (rng.random(n) < 0.8).astype(float),
            "latency": rng.normal(300, 10, n),
            "economics": rng.normal(0.25, 0.01, n),
        },
        index=idx,
    )
    cheaper = base.assign(economics=base["economics"] - 0.02)
    unsafe = cheaper.assign(policy=np.where(np.arange(n) % 10 == 0, 0.0, 1.0))
    return base, {"trial_1": cheaper, "trial_2": unsafe, "trial_3": base.copy()}


def gate_run(
    frames: dict[str, pd.DataFrame] | None = None,
    research: list[ResearchConfirmation] | None = None,
    **extra: object,
) -> GateRun:
    base, cands = _frames()
    cands = frames if frames is not None else cands
    decisions = decide(
        base,
        cands,
        target_metric="economics",
        target_direction="decrease",
        guardrails=GateGuardrails(policy_floor=1.0, safety_floor=1.0, accepted_delta={}),
        n_boot=200,
    )
    return GateRun(
        run_id="eval_2026_05_04_a01",
        created_at=datetime.now(UTC),
        study="s",
        storage="memory",
        spec_name="s",
        spec_path="run.yaml",
        spec_hash="0" * 64,
        target={"intent": "support.refund", "metric": "economics", "direction": "decrease",
                "guardrails": ["policy>=1.0", "safety>=1.0"]},
        guardrails={"floors": {"policy": 1.0, "safety": 1.0}, "accepted_deltas": {}},
        guardrail_strings=["policy>=1.0", "safety>=1.0"],
        baseline_tuple={"pack": "p@1", "policy": "q@1", "tool_manifest": "t@1",
                        "evaluator_suite": "e@1", "model_profile": "m@1"},
        tunable_surfaces=["top_k"],
        rollback_target="p@1",
        search_set={"path": "search", "manifest_hash": "a" * 64},
        heldout={"path": "heldout", "manifest_hash": "b" * 64, "n_cases": 400},
        prior_heldout_reads=7,
        reads_warning="this held-out set has been read 7 times before",
        alpha=0.05,
        n_boot=200,
        baseline_heldout_means={},
        candidates=[
            GateCandidate(
                candidate_id=cid, trial_number=i, rank=i, params={"top_k": i},
                config_diff={"top_k": {"from": 3, "to": i}}, layers=["retrieval"],
                n_changed=1, search_scores={}, heldout_means={},
            )
            for i, cid in enumerate(cands, start=1)
        ],
        decisions=decisions,
        research=research or [],
        **extra,
    )  # fmt: skip


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "reports" / "eval_2026_05_04_a01" / "03_heldout_gate.html"
    path.parent.mkdir(parents=True)
    path.write_text("<html>the gate report</html>")
    return path


def test_only_promote_becomes_a_tuning_proposal(tmp_path: Path, report: Path) -> None:
    run = gate_run()
    assert [d.verdict for d in run.decisions] == ["promote", "regression", "no_effect"]
    result = emit(run, report, tmp_path)
    assert len(result.tuning_proposals) == 1
    path = Path(result.tuning_proposals[0])
    proposal = TuningProposal.model_validate_json(path.read_text())
    assert proposal.status.value == "proposed"
    assert proposal.candidate_change.layer == "retrieval"
    assert proposal.candidate_change.diff["top_k"].to == 1
    assert proposal.evaluation_run_id == "eval_2026_05_04_a01"
    econ = proposal.expected_delta["economics"]
    assert econ["ci_low"] <= econ["delta"] <= econ["ci_high"] < 0
    assert proposal.gate["verdict"] == "promote"
    assert proposal.gate["prior_heldout_reads"] == 7 and proposal.gate["reads_warning"]
    assert proposal.rollback_target == "p@1" and proposal.guardrails["floors"]["policy"] == 1.0
    # the report the proposal cites is the HTML beside it, byte for byte
    assert proposal.report is not None
    assert (path.parent / proposal.report.path).resolve() == report.resolve()
    assert proposal.report.sha256 == sha256_file(report) and report_matches(path)
    report.write_text("<html>edited afterwards</html>")
    assert not report_matches(path)
    assert {n["verdict"] for n in result.not_emitted} == {"regression", "no_effect"}


def test_nothing_promoted_emits_nothing_and_says_so(tmp_path: Path, report: Path) -> None:
    _, cands = _frames()
    run = gate_run({"trial_2": cands["trial_2"], "trial_3": cands["trial_3"]})
    result = emit(run, report, tmp_path)
    assert result.tuning_proposals == [] and result.research_tasks == []
    assert "nothing promoted" in result.message and "no TuningProposal emitted" in result.message
    assert not (tmp_path / "proposals").exists()


def test_write_is_atomic_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "p" / "at_x.json"
    write_new(path, "first\n")
    with pytest.raises(ProposalExists):
        write_new(path, "second\n")
    assert path.read_text() == "first\n"
    assert [p.name for p in path.parent.iterdir()] == ["at_x.json"]  # no temp files left


def test_re_emitting_a_run_leaves_existing_ids_untouched(tmp_path: Path, report: Path) -> None:
    run = gate_run()
    first = emit(run, report, tmp_path)
    before = Path(first.tuning_proposals[0]).read_bytes()
    second = emit(run, report, tmp_path)
    assert second.tuning_proposals == [] and len(second.existing) == 1
    assert Path(first.tuning_proposals[0]).read_bytes() == before


@pytest.fixture(scope="module")
def research_setup() -> tuple[list[ResearchCandidate], pd.DataFrame]:
    from contextos_lab.gate.research import heldout_runs, split_of

    report = analyse(load_sources(["synthetic:1200:7"]), text_backend=None)
    cands = [c for c in report.candidates if c.pattern_spec.get("rule") != "feedback_cluster"]
    assert cands
    return cands, heldout_runs(["synthetic:1200:7"], split_of(cands))


def test_research_task_emitted_only_when_confirmed_on_heldout(
    tmp_path: Path, report: Path, research_setup: tuple[list[ResearchCandidate], pd.DataFrame]
) -> None:
    cands, heldout = research_setup
    real = cands[0]
    # the same pattern on a decision key that never occurs on held-out: not confirmed
    spec = json.loads(json.dumps(real.pattern_spec))
    spec["key"] = (
        {**spec["key"], "decision_key": "support.nowhere"}
        if "decision_key" in spec["key"]
        else {"ref": "evidence:never_missing"}
    )
    task = real.task.model_copy(update={"research_task_id": "rq_2026_05_04_zz9"})
    absent = real.model_copy(update={"pattern_spec": spec, "task": task})
    confirmations = confirm([real, absent], heldout, target_intent="support.refund")
    assert [c.confirmed for c in confirmations] == [True, False]
    assert confirmations[0].basis == "confirmed_on_heldout"
    run = gate_run(research=confirmations)
    result = emit(run, report, tmp_path)
    assert len(result.research_tasks) == 1
    task_file = Path(result.research_tasks[0])
    emitted = ResearchTask.model_validate_json(task_file.read_text())
    assert emitted.research_task_id == real.task.research_task_id
    assert emitted.confirmation["basis"] == "confirmed_on_heldout"
    assert emitted.report is not None and emitted.report["sha256"] == sha256_file(report)
    assert "rq_2026_05_04_zz9" in {n.get("research_task_id") for n in result.not_emitted}


def test_research_task_carries_the_trace_split_read_count_and_warning(
    tmp_path: Path, report: Path, research_setup: tuple[list[ResearchCandidate], pd.DataFrame]
) -> None:
    cands, heldout = research_setup
    confirmations = confirm(cands[:1], heldout, target_intent="support.refund")
    assert confirmations[0].confirmed
    warning = "this held-out set has been read 6 times before; ..."
    run = gate_run(
        research=confirmations, research_prior_heldout_reads=6, research_reads_warning=warning
    )
    [path] = emit(run, report, tmp_path).research_tasks
    emitted = ResearchTask.model_validate_json(Path(path).read_text())
    assert emitted.confirmation["prior_heldout_reads"] == 6
    assert emitted.confirmation["reads_warning"] == warning
    # the tuning set's count (7) is a different held-out set and is not what the task carries
    assert run.prior_heldout_reads == 7


def test_knowledge_gap_path_needs_an_open_gap(
    research_setup: tuple[list[ResearchCandidate], pd.DataFrame],
) -> None:
    """A recurring but not significant pattern is emitted only when tuning closed nothing."""
    cands, heldout = research_setup
    few = heldout.iloc[: max(1, len(heldout) // 12)]  # too few runs for significance
    closed = confirm(cands, few, tuning_closed_gap=True, target_intent="support.refund")
    open_ = confirm(cands, few, tuning_closed_gap=False, target_intent="support.refund")
    for c, o in zip(closed, open_, strict=True):
        if c.basis == "unconfirmed" and o.confirmed:
            assert o.basis == "no_tuning_candidate_closes_gap"
    assert sum(o.confirmed for o in open_) >= sum(c.confirmed for c in closed)


def test_one_proposal_per_sweep_with_its_operating_points(tmp_path: Path, report: Path) -> None:
    _, cands = _frames()
    bigger = cands["trial_1"].assign(economics=cands["trial_1"]["economics"] - 0.02)
    run = gate_run({"trial_1": cands["trial_1"], "trial_2": bigger, "trial_3": cands["trial_3"]})
    assert [d.verdict for d in run.decisions] == ["promote", "promote", "no_effect"]
    result = emit(run, report, tmp_path)
    assert len(result.tuning_proposals) == 1  # one decision, not one file per candidate
    proposal = TuningProposal.model_validate_json(Path(result.tuning_proposals[0]).read_text())
    points = proposal.operating_points
    # ranked by held-out target gain: trial_2 saves 0.04, trial_1 0.02
    assert [p.candidate_id for p in points] == ["trial_2", "trial_1"]
    assert [p.rank for p in points] == [1, 2]
    assert proposal.candidate_change.diff["top_k"].to == 2  # rank 1 is the change
    assert points[1].expected_delta["economics"]["delta"] < 0
    assert "2 operating point(s)" in result.message


def test_the_same_sweep_again_is_already_proposed(tmp_path: Path, report: Path) -> None:
    first = emit(gate_run(), report, tmp_path)
    # a new evaluation run over the same data: same change, same evidence, another run id
    again = emit(gate_run().model_copy(update={"run_id": "eval_2026_05_05_b02"}), report, tmp_path)
    assert again.tuning_proposals == []
    assert again.existing == first.tuning_proposals
    assert again.message.startswith(f"already proposed: {first.tuning_proposals[0]}")
    assert len(list((tmp_path / "proposals").glob("at_*.json"))) == 1
    # other evidence (another held-out set) is a new proposal
    other = gate_run().model_copy(
        update={"run_id": "eval_2026_05_06_c03", "heldout": {"path": "h2", "manifest_hash":
                "c" * 64, "n_cases": 400}}
    )  # fmt: skip
    assert len(emit(other, report, tmp_path).tuning_proposals) == 1
