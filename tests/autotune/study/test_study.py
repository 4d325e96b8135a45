"""The study: baseline first, seeded, constrained, failures recorded, resumable, shared."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext, prepare
from contextos_lab.autotune.pareto import feasible_front, trials_frame
from contextos_lab.autotune.spec.load import load_spec, parse_spec
from contextos_lab.autotune.study.baseline import HarnessUnreachable, ensure_baseline
from contextos_lab.autotune.study.open import StudyMismatch, open_study
from contextos_lab.autotune.study.run import run_study, work
from contextos_lab.autotune.study.storage import StorageUnreachable, open_storage
from contextos_lab.autotune.study.trial_count import counted_trials
from tests.autotune.conftest import toy_spec_dict

REPO = Path(__file__).resolve().parents[3]


def make_ctx(case_dir: Path, **overrides: Any) -> RunContext:
    return prepare(parse_spec(toy_spec_dict(**overrides), case_dir))


def test_baseline_is_trial_zero_and_seed_reproduces_the_study(case_dir: Path) -> None:
    ctx = make_ctx(case_dir)
    a = run_study(ctx, "memory", n_trials=15, progress=False)
    b = run_study(ctx, "memory", n_trials=15, progress=False)
    first = a.trials[0]
    assert first.user_attrs["is_baseline"] and first.params == ctx.space.baseline_params()
    assert a.user_attrs["baseline_trial"] == 0
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    other = make_ctx(case_dir, sampler={"kind": "tpe", "seed": 2})
    c = run_study(other, "memory", n_trials=15, progress=False)
    assert [t.params for t in c.trials] != [t.params for t in a.trials]


def test_floors_are_constraints_and_front_members_meet_them(case_dir: Path) -> None:
    ctx = make_ctx(case_dir, sampler={"kind": "random", "seed": 3})
    study = run_study(ctx, "memory", n_trials=40, progress=False)
    frame = trials_frame(study)
    infeasible = frame[~frame["feasible"]]
    assert len(infeasible) > 0  # approval_threshold 0.5 approves risky cases: policy < floor
    assert (infeasible["c_floor_policy"] > 0).any()
    front = feasible_front(frame, ctx.spec)
    assert len(front) > 0
    assert not set(front["number"]) & set(infeasible["number"])
    assert (front["policy"] >= 0.99).all() and (front["safety"] >= 1.0).all()
    assert len(study.directions) == 3  # utility, latency, economics; floors are not objectives
    t = study.trials[1]
    assert set(t.constraints) == {"floor_policy", "floor_safety", "delta_utility"}
    assert set(t.user_attrs["scores"]) == {"policy", "safety", "utility", "latency", "economics"}
    assert t.user_attrs["search_set"]["n_cases"] == 12
    assert len(t.user_attrs["search_set"]["case_hashes"]) == 12


def test_failed_trial_recorded_with_reason_and_study_continues(case_dir: Path) -> None:
    ctx = make_ctx(case_dir, harness_kwargs={"fail_top_k": 1})
    study = open_study(ctx, open_storage("memory"))
    ensure_baseline(ctx, study)
    study.enqueue_trial({"top_k": 1, "max_hops": 2, "approval_threshold": 0.7, "budget": 2000})
    work(ctx, study, budget=6)
    failed = [t for t in study.trials if t.state == TrialState.FAIL]
    assert len(failed) == 1 and failed[0].number == 1
    assert "cannot run top_k=1" in failed[0].user_attrs["fail_reason"]
    assert len(study.trials) == 6  # counted toward the budget, not retried
    assert all(t.state == TrialState.COMPLETE for t in study.trials[2:])


def test_a_second_baseline_left_queued_by_another_process_is_closed_not_run(
    case_dir: Path,
) -> None:
    """Three processes starting one study can each enqueue a baseline; one runs, one is closed
    in ensure_baseline, and the third must not be run later as a search trial (seen on
    PostgreSQL: two completed baselines)."""
    ctx = make_ctx(case_dir)
    study = open_study(ctx, open_storage("memory"))
    ensure_baseline(ctx, study)
    study.enqueue_trial(ctx.space.baseline_params(), user_attrs={"is_baseline": True})
    work(ctx, study, budget=4)
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert sum(bool(t.user_attrs.get("is_baseline")) for t in complete) == 1
    closed = [t for t in study.trials if t.user_attrs.get("duplicate_baseline")]
    assert [t.state for t in closed] == [TrialState.FAIL]
    assert counted_trials(study) == 4 and len(complete) == 4


def test_unreachable_storage_and_harness_fail_clearly(case_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(StorageUnreachable, match="no_such_dir"):
        open_storage(str(tmp_path / "no_such_dir" / "study.log"))
    with pytest.raises(StorageUnreachable, match=r"u:\*\*\*@127.0.0.1"):
        open_storage("postgresql://u:secret@127.0.0.1:1/db")
    broken = make_ctx(case_dir, harness_kwargs={"fail_top_k": 4})  # 4 is the baseline top_k
    with pytest.raises(HarnessUnreachable, match="baseline trial 0 failed"):
        run_study(broken, "memory", n_trials=3, progress=False)


def test_resumed_study_must_match_its_spec(case_dir: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    run_study(make_ctx(case_dir), url, n_trials=3, progress=False)
    other = make_ctx(case_dir, tunable_surfaces=["top_k", "max_hops"])
    with pytest.raises(StudyMismatch, match="different spec"):
        run_study(other, url, n_trials=3, progress=False)


def _write_spec(case_dir: Path, **overrides: Any) -> Path:
    path = case_dir / "run.yaml"
    path.write_text(yaml.safe_dump(toy_spec_dict(**overrides)))
    return path


def test_killed_sweep_resumes_without_losing_finished_trials(case_dir: Path) -> None:
    spec_path = _write_spec(case_dir, harness_kwargs={"delay": 0.15})
    out, budget = case_dir / "out", 14
    url = f"sqlite:///{case_dir / 'study.db'}"
    cmd = [sys.executable, "-m", "contextos_lab.cli", "search", str(spec_path), "--out",
           str(out), "--n-trials", str(budget), "--storage", url, "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    storage = open_storage(url)
    deadline = time.time() + 60
    done: list[optuna.trial.FrozenTrial] = []
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            study = optuna.load_study(study_name="toy_run", storage=storage)
        except KeyError:
            continue
        done = study.get_trials(states=(TrialState.COMPLETE,))
        if len(done) >= 4:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 4 <= len(done) < budget, "sweep should be killed mid-run"
    before = {
        t.number: (t.params, t.values)
        for t in optuna.load_study(study_name="toy_run", storage=storage).get_trials(
            states=(TrialState.COMPLETE,)
        )
    }
    study = run_study(prepare(load_spec(spec_path)), url, n_trials=budget, progress=False)
    after = {t.number: (t.params, t.values) for t in study.trials}
    assert all(after[n] == v for n, v in before.items())  # nothing finished was lost
    assert counted_trials(study) == budget
    interrupted = [t for t in study.trials if t.user_attrs.get("interrupted")]
    assert all(t.state == TrialState.FAIL for t in interrupted)
    assert all("interrupted" in t.user_attrs["fail_reason"] for t in interrupted)
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(complete) == budget


def test_two_workers_share_one_journal_study(case_dir: Path) -> None:
    ctx = make_ctx(case_dir, harness_kwargs={"delay": 0.05})
    budget = 16
    study = run_study(ctx, str(case_dir / "study.log"), n_trials=budget, workers=2, progress=False)
    trials = [t for t in study.trials if not t.user_attrs.get("over_budget")]
    assert len(trials) == budget  # the budget is the study's: no overshoot
    assert all(t.state == TrialState.COMPLETE for t in trials)
    workers = {t.user_attrs["worker"] for t in trials[1:]}
    assert len(workers) == 2 and str(os.getpid()) not in {w.split(":")[1] for w in workers}


def test_a_just_asked_trial_with_no_worker_yet_is_not_reaped() -> None:
    """Another process's trial between `ask()` and recording its worker is alive, not dead
    (the race that failed CI with three `search` processes on PostgreSQL)."""
    from contextos_lab.autotune.study.trial_count import reap_interrupted

    study = optuna.create_study()
    fresh = study.ask()
    assert reap_interrupted(study) == []
    assert study.trials[fresh.number].state == TrialState.RUNNING
    # an unclaimed trial older than the grace period is a worker that died right after ask()
    assert reap_interrupted(study, grace_s=0.0) == [fresh.number]
    reaped = study.trials[fresh.number]
    assert reaped.state == TrialState.FAIL and reaped.user_attrs["interrupted"] is True


def test_a_trial_whose_worker_process_is_gone_is_reaped_at_once() -> None:
    from contextos_lab.autotune.study.trial_count import reap_interrupted

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    study = optuna.create_study()
    trial = study.ask()
    trial.set_user_attr("worker", f"{socket.gethostname()}:{dead.pid}")
    alive = study.ask()
    alive.set_user_attr("worker", f"{socket.gethostname()}:{os.getpid()}")
    assert reap_interrupted(study) == [trial.number]
    assert study.trials[alive.number].state == TrialState.RUNNING


def test_a_context_scorer_scores_full_set_trials_in_place_of_the_harness(case_dir: Path) -> None:
    """`RunContext.score_config` (the extension point benchmarks use to read scores from an
    enumerated grid) replaces the harness run of every full-set trial; the study still records
    the baseline, constraints and objectives from what it returns."""
    from contextos_lab.autotune import objective

    ctx = make_ctx(case_dir, fidelity="full")
    seen: list[dict[str, Any]] = []

    def scorer(c: RunContext, params: Any) -> dict[str, Any]:
        seen.append(dict(params))
        outcome = objective.score_config(c, params)
        return {**outcome, "scores": {**outcome["scores"], "economics": 1.25}}

    ctx.score_config = scorer
    study = run_study(ctx, "memory", n_trials=4, progress=False)
    assert [t.params for t in study.trials] == seen  # every trial, the baseline first
    assert all(t.user_attrs["scores"]["economics"] == 1.25 for t in study.trials)
    ctx.score_config = None
    plain = run_study(ctx, "memory", n_trials=1, progress=False)
    assert plain.trials[0].user_attrs["scores"]["economics"] != 1.25
