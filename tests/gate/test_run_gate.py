"""The gate end to end on a toy project and on the reference harness (no notebooks here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.heldout.heldout import HeldoutOverlapError
from contextos_lab.gate.run_gate import StudyNotFound, load_gate_run, run_gate
from contextos_lab.proposals.files.emit import emit
from tests.gate.conftest import study_for
from tests.gate.gate_toy import cases, write_project

REPO = Path(__file__).resolve().parents[2]


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text("<html>gate report</html>")
    return path


def test_candidate_unsafe_only_on_heldout_is_regression_not_proposal(
    project: Path, ledger_file: Path, tmp_path: Path
) -> None:
    out = project.parent / "out"
    url = study_for(project, out)
    result = run_gate(project, storage=url, out_dir=out, ledger_file=ledger_file)
    run = result.run
    assert run.candidates, "the study found feasible front candidates"
    for d in run.decisions:
        cand = run.candidate(d.candidate_id)
        assert cand.search_scores["policy"] == 1.0  # feasible on the search set
        assert d.verdict == "regression"
        assert any("policy floor breached" in r for r in d.reasons)
    emitted = emit(run, _report(tmp_path), out)
    assert emitted.tuning_proposals == [] and not (out / "proposals").exists()
    assert "nothing promoted" in emitted.message
    assert {n["verdict"] for n in emitted.not_emitted} == {"regression"}


def test_safe_knob_promotes_and_gate_json_round_trips(tmp_path: Path, ledger_file: Path) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    out = tmp_path / "out"
    result = run_gate(
        spec, storage=study_for(spec, out), out_dir=out, ledger_file=ledger_file, n_boot=300
    )
    verdicts = {
        result.run.candidate(d.candidate_id).params["top_k"]: d.verdict
        for d in result.run.decisions
    }
    assert verdicts[1] == "promote"
    saved = load_gate_run(out / "gate.json")
    assert saved == result.run
    table = saved.table()
    assert {"delta", "ci_low", "ci_high", "p_value", "p_holm"} <= set(table.columns)


def test_overlapping_heldout_is_refused_naming_the_cases(project: Path, ledger_file: Path) -> None:
    out = project.parent / "out"
    url = study_for(project, out)
    leaked = cases("s", 200, 0, seed=1).iloc[[3, 7]]  # two search cases, same ids and content
    heldout = project.parent / "heldout.jsonl"
    with heldout.open("a") as fh:
        fh.write(leaked.to_json(orient="records", lines=True))
    with pytest.raises(Exception) as info:
        run_gate(project, storage=url, out_dir=out, ledger_file=ledger_file)
    # check_spec refuses first (search/held-out share cases); the gate refuses on its own too
    assert "s0003" in str(info.value) and "s0007" in str(info.value)
    assert not ledger_file.exists(), "a refused held-out set is never read"


def test_gate_refuses_overlap_on_its_own(project: Path, ledger_file: Path) -> None:
    """Even with the spec check bypassed, the held-out reader refuses a leaked case."""
    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import load_spec

    out = project.parent / "out"
    url = study_for(project, out)
    ctx = prepare(load_spec(project))
    heldout = project.parent / "heldout.jsonl"
    with heldout.open("a") as fh:
        fh.write(cases("s", 200, 0, seed=1).iloc[[5]].to_json(orient="records", lines=True))
    with pytest.raises(HeldoutOverlapError, match="s0005"):
        run_gate(project, storage=url, out_dir=out, ledger_file=ledger_file, ctx=ctx)
    assert not ledger_file.exists()


def test_ledger_counts_reads_across_gate_runs(project: Path, ledger_file: Path) -> None:
    out = project.parent / "out"
    url = study_for(project, out)
    first = run_gate(project, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=200)
    second = run_gate(
        project, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=200, reuse=False
    )  # a deliberate second read: the same question is otherwise answered from gate.json
    assert (first.run.prior_heldout_reads, second.run.prior_heldout_reads) == (0, 1)
    assert first.run.run_id != second.run.run_id
    manifest = second.run.heldout["manifest_hash"]
    assert ledger.prior_reads(manifest, ledger_file) == 2
    entries = ledger.reads(ledger_file)
    assert [e.run_id for e in entries] == [first.run.run_id, second.run.run_id]
    assert entries[0].study == "gate_toy_run" and entries[0].n_candidates >= 1
    assert json.loads((out / "gate.json").read_text())["prior_heldout_reads"] == 1


def test_reads_warning_after_threshold(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    for i in range(ledger.READS_WARNING_THRESHOLD + 1):
        before = ledger.record_read(
            manifest_hash="m",
            run_id=f"r{i}",
            study="s",
            spec_hash="h",
            heldout_path="x",
            n_cases=1,
            n_candidates=1,
            path=path,
        )
        assert before == i
    assert ledger.prior_reads("other", path) == 0
    assert ledger.reads_warning(ledger.READS_WARNING_THRESHOLD) is None
    assert "read 6 times" in (ledger.reads_warning(6) or "")
    with path.open("a") as fh:
        fh.write('{"torn line')  # a crash mid-append is skipped, not fatal
    assert ledger.prior_reads("m", path) == ledger.READS_WARNING_THRESHOLD + 1


def test_missing_study_is_named(project: Path, ledger_file: Path) -> None:
    out = project.parent / "out"
    study_for(project, out)
    with pytest.raises(StudyNotFound, match="nope"):
        run_gate(project, study_name="nope", out_dir=out, ledger_file=ledger_file)


def test_reference_floor_breach_spec_yields_regression_for_its_best_candidate(
    tmp_path: Path, ledger_file: Path
) -> None:
    spec = REPO / "specs" / "reference_floor_breach.yaml"
    out = tmp_path / "out"
    url = study_for(spec, out)
    result = run_gate(spec, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=300)
    best = result.run.decisions[0]  # candidates are in the seed's ranking
    cand = result.run.candidate(best.candidate_id)
    assert cand.config_diff == {"approval_threshold": {"from": 100, "to": 200}}
    assert cand.search_scores["policy"] >= 0.96  # feasible on search (the spec's floor)
    assert best.verdict == "regression"
    assert "policy violations rose significantly" in best.reasons[0]
    emitted = emit(result.run, _report(tmp_path), out)
    diffs = [
        json.loads(Path(p).read_text())["candidate_change"]["diff"]
        for p in emitted.tuning_proposals
    ]
    assert all(d.get("approval_threshold", {}).get("to") != 200 for d in diffs)


def test_spec_file_floor_is_declared() -> None:
    spec = yaml.safe_load((REPO / "specs" / "reference_floor_breach.yaml").read_text())
    assert spec["guardrails"]["floors"]["policy"] < 1.0


def test_holm_matches_statsmodels() -> None:
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from contextos_lab.gate.paired_tests import holm_adjust

    rng = np.random.default_rng(0)
    for _ in range(8):  # statsmodels collects garbage on every call: keep this short
        p = rng.random(int(rng.integers(1, 12))) ** 3
        p[-1] = p[0]  # ties
        assert holm_adjust(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]))


def test_research_confirmation_records_prior_reads_of_the_trace_split(
    project: Path, ledger_file: Path, tmp_path: Path
) -> None:
    """Each gate run that confirms ResearchTask candidates reads the held-out trace split once;
    the count of earlier reads is kept on the run (it goes into every emitted ResearchTask)."""
    from contextos_lab.insights.pipeline import analyse, write_report
    from contextos_lab.insights.sources import load_sources

    source = "synthetic:400:7"
    insights = write_report(
        analyse(load_sources([source]), text_backend=None), tmp_path / "clusters"
    )
    out = tmp_path / "out"
    url = study_for(project, out, n_trials=4)
    kw = dict(storage=url, out_dir=out, ledger_file=ledger_file, n_boot=100,
              insights=insights, sources=[source], reuse=False)  # fmt: skip
    first = run_gate(project, **kw).run  # type: ignore[arg-type]
    assert first.research, "the synthetic history yields research candidates"
    assert first.research_prior_heldout_reads == 0 and first.research_reads_warning is None
    second = run_gate(project, **kw).run  # type: ignore[arg-type]
    assert second.research_prior_heldout_reads == 1
    assert second.prior_heldout_reads == 1  # the case set's own count, separately keyed
    assert load_gate_run(out / "gate.json").research_prior_heldout_reads == 1
    traces = {r.manifest_hash for r in ledger.reads(ledger_file)} - {
        r.manifest_hash for r in ledger.reads(ledger_file) if r.heldout_path != source
    }
    [trace_hash] = traces
    assert trace_hash.startswith("traces:")
    for i in range(ledger.READS_WARNING_THRESHOLD - 1):
        ledger.record_read(manifest_hash=trace_hash, run_id=f"r{i}", study="s", spec_hash="h",
                           heldout_path=source, n_cases=1, n_candidates=1,
                           path=ledger_file)  # fmt: skip
    third = run_gate(project, **kw).run  # type: ignore[arg-type]
    assert third.research_prior_heldout_reads == ledger.READS_WARNING_THRESHOLD + 1
    assert "read 6 times" in (third.research_reads_warning or "")
    assert third.reads_warning is None  # the case set was read twice only
