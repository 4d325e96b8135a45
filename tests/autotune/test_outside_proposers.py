"""The run layout proposers read, `enqueue` with provenance, and the reference proposer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.gate.run_gate import load_gate_run, run_gate
from contextos_lab.proposals.files.emit import emit
from contextos_lab.proposals.files.emitted_store import store_emitted
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.schemas.tuning import TuningProposal
from contextos_lab.store import ExperienceStore
from tests.gate.conftest import study_for
from tests.gate.gate_toy import write_project

REPO = Path(__file__).resolve().parents[2]


def _study(out: Path, name: str) -> optuna.Study:
    return optuna.load_study(study_name=name, storage=open_storage(f"sqlite:///{out}/study.db"))


def test_layout_holds_every_trial_and_case_of_the_search_set_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # promotion `possible`: every feasible config goes on, so every trial completes the whole
    # search set (the default, estimated_gain, may stop one as not promoted after fewer cases)
    spec = write_project(tmp_path / "p", n_trials=6, racing={"promotion": "possible"})
    out = tmp_path / "out"
    study_for(spec, out)
    runs = out / "runs" / "gate_toy_run"
    about = json.loads((runs / "study.json").read_text())
    assert about["target"]["metric"] and {s["name"] for s in about["surfaces"]} >= {"top_k"}
    index = [json.loads(x) for x in (runs / "index.jsonl").read_text().splitlines()]
    assert [r["trial"] for r in index] == list(range(6))
    for n in range(6):
        folder = runs / f"trial_{n}"
        config = json.loads((folder / "config.json").read_text())
        scores = json.loads((folder / "scores.json").read_text())
        assert config["trial"] == n and set(config["params"]) == {"top_k", "auto_approve"}
        cases = sorted(p.stem for p in (folder / "cases").glob("*.json"))
        assert cases == [f"s{i:04d}" for i in range(200)]  # search cases only, every one
        one = json.loads((folder / "cases" / "s0003.json").read_text())
        assert {"case", "result", "scores", "failed"} <= set(one)
        assert one["result"]["decision"] and "trace" in one["result"]
        assert scores["state"] == "COMPLETE" and set(scores["failing_cases"]) <= set(cases)
    baseline = json.loads((runs / "trial_0" / "scores.json").read_text())
    assert baseline["state"] == "COMPLETE"  # the baseline runs every stage
    baseline_failing = baseline["failing_cases"]
    assert sorted(p.stem for p in (runs / "baseline_failures").glob("*.json")) == sorted(
        baseline_failing
    )
    # the gate reads held-out; nothing of it lands in the layout
    run_gate(spec, storage=f"sqlite:///{out}/study.db", out_dir=out,
             ledger_file=tmp_path / "l.jsonl", n_boot=200)  # fmt: skip
    assert not list(runs.glob("*/cases/h*.json"))


def test_enqueue_refuses_unknown_knobs_and_off_grid_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_project(tmp_path / "p", n_trials=3)
    out = tmp_path / "out"
    study_for(spec, out)
    bad = tmp_path / "bad.json"
    base = ["enqueue", str(spec), "--out", str(out), "--by", "alice", "--rationale", "why"]
    bad.write_text(json.dumps({"top_k": 2, "temperature": 0.3}))
    assert main([*base, "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "'temperature' is not a declared tunable surface" in err and "\n" not in err
    bad.write_text(json.dumps({"top_k": 9}))
    assert main([*base, "--config", str(bad)]) == 2
    assert "top_k=9 is not on its grid" in capsys.readouterr().err
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"top_k": 1}))
    assert main([*base, "--config", str(good), "--cites", "trial_99/s0001"]) == 2
    assert "not in the run layout" in capsys.readouterr().err


@pytest.mark.notebook
def test_an_outside_change_is_evaluated_gated_and_emitted_with_its_provenance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """enqueue -> evaluate -> judge pairwise -> ingest -> `gate --store`: the TuningProposal
    names its proposer and carries its preference evidence, in the file and in the store."""
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=2)
    out = tmp_path / "out"
    study_for(spec, out)
    config = tmp_path / "change.json"
    config.write_text(json.dumps({"top_k": 1}))
    args = ["enqueue", str(spec), "--out", str(out), "--config", str(config), "--by", "alice",
            "--rationale", "cheaper retrieval", "--cites", "trial_0/s0001",
            "--evaluate"]  # fmt: skip
    assert main(args) == 0
    trial = _study(out, "gate_toy_run").trials[-1]
    assert trial.state.name == "COMPLETE" and trial.params == {"top_k": 1}
    assert trial.user_attrs["proposer"]["by"] == "alice"
    laid = json.loads((out / "runs" / "gate_toy_run" / f"trial_{trial.number}" / "config.json")
                      .read_text())  # fmt: skip
    assert laid["proposer"]["rationale"] == "cheaper retrieval"
    prefs, url = tmp_path / "prefs.jsonl", f"sqlite:///{tmp_path}/store.db"
    judge = [sys.executable, str(REPO / "examples" / "reference_proposer" / "judge.py"),
             str(out / "runs" / "gate_toy_run"), "--out", str(prefs)]  # fmt: skip
    assert subprocess.run(judge, check=False).returncode == 0
    named = ["--project", str(BUNDLED_PROJECT)]  # a fresh store's first write names its project
    assert main(["ingest", "preferences", str(prefs), "--store", url, *named]) == 0
    gate = ["gate", "--spec", str(spec), "--out", str(out), "--ledger", str(tmp_path / "l.jsonl"),
            "--store", url]  # fmt: skip
    assert main(gate) == 0, capsys.readouterr()
    run = load_gate_run(out / "gate.json")
    cand = next(c for c in run.candidates if c.trial_number == trial.number)
    assert cand.proposer is not None and cand.proposer["cites"] == ["trial_0/s0001"]
    decision = next(d for d in run.decisions if d.candidate_id == cand.candidate_id)
    assert decision.verdict == "promote"  # top_k=1 is cheaper on held-out too (the toy's design)
    files = [json.loads(p.read_text()) for p in (out / "proposals").glob("at_*.json")]
    assert len(files) == 1 and files[0]["gate"]["candidate_id"] == cand.candidate_id
    store = ExperienceStore(url)
    stored = store.get(TuningProposal, files[0]["tuning_proposal_id"])
    assert stored is not None
    judged = {e.preference_id: e for e in store.list(PreferenceEntry)}
    for gate_block in (files[0]["gate"], stored.gate):
        assert gate_block["proposer"]["by"] == "alice"
        assert gate_block["proposer"]["rationale"] == "cheaper retrieval"
        (evidence,) = gate_block["preferences"]
        subject = f"gate_toy_run/trial_{trial.number}"
        assert evidence["subject"] == subject and evidence["criterion"] == "correctness"
        cited = [judged[i] for i in evidence["preference_ids"]]  # every id is a stored entry
        assert cited and all(subject in (e.a_subject, e.b_subject) for e in cited)
        assert (
            len(cited)
            == evidence["comparisons"]
            == sum(subject in (e.a_subject, e.b_subject) for e in judged.values())
        )
        assert evidence["ci_low"] <= evidence["win_rate"] <= evidence["ci_high"]
        assert evidence["baseline"]["subject"] == "gate_toy_run/trial_0"


def test_reference_proposer_reads_the_layout_and_enqueues_one_cited_change(
    tmp_path: Path,
) -> None:
    spec = REPO / "specs" / "reference_refund.yaml"
    out = tmp_path / "out"
    assert main(["search", str(spec), "--out", str(out), "--n-trials", "30", "--no-progress"]) == 0
    proposer = REPO / "examples" / "reference_proposer" / "propose.py"
    done = subprocess.run(
        [sys.executable, str(proposer), str(spec), "--out", str(out), "--evaluate"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    study = _study(out, "reference_refund_economics")
    outside = [t for t in study.trials if (t.user_attrs.get("proposer") or {}).get("kind")]
    assert len(outside) == 1 and outside[0].state.name == "COMPLETE"
    prov = outside[0].user_attrs["proposer"]
    assert prov["by"] == "reference-proposer" and prov["cites"]
    assert all(c.startswith("trial_") and "/s-" in c for c in prov["cites"])
    result = run_gate(spec, storage=f"sqlite:///{out}/study.db", out_dir=out,
                      ledger_file=tmp_path / "l.jsonl", n_boot=200)  # fmt: skip
    gated = {c.trial_number: c for c in result.run.candidates}
    target = load_spec(spec).target
    base, mine = study.user_attrs["baseline_scores"], outside[0].user_attrs["scores"]
    gain = mine[target.metric.value] - base[target.metric.value]
    gain = gain if target.direction.value == "increase" else -gain
    feasible = all(v <= 0 for v in outside[0].constraints.values())
    if feasible and gain > 0:  # promotable: the gate judges it, on the front or not
        assert gated[outside[0].number].proposer["by"] == "reference-proposer"
    else:
        assert outside[0].number not in gated
    # emitted only if the gate promotes it, then with its provenance in the file and the store
    report = tmp_path / "r.html"
    report.write_text("<html>gate</html>")
    emitted = emit(result.run, report, out)
    store = ExperienceStore(f"sqlite:///{tmp_path}/store.db")
    stored, refused = store_emitted(emitted, store)
    assert not refused and len(stored) == len(emitted.tuning_proposals) + len(
        emitted.research_tasks
    )
    promoted = {d.candidate_id for d in result.run.promoted}
    mine = f"trial_{outside[0].number}"
    for path in emitted.tuning_proposals:
        data = json.loads(Path(path).read_text())
        kept = store.get(TuningProposal, data["tuning_proposal_id"])
        for points in (data["operating_points"], [p.model_dump() for p in kept.operating_points]):
            named = {p["candidate_id"]: p["proposer"] for p in points}
            assert (mine in named) == (mine in promoted)  # never emitted without the gate
            if mine in named:
                assert named[mine]["by"] == "reference-proposer"
                assert named[mine]["rationale"] == prov["rationale"]
                assert named[mine]["cites"] == prov["cites"]
        top = data["gate"]["candidate_id"]
        assert data["gate"]["proposer"] == kept.gate["proposer"]
        assert (data["gate"]["proposer"]["by"] == "reference-proposer") == (top == mine)
