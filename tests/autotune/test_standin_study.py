"""The stand-in LLM harness through a study and the gate: concurrency, repeats, the result
cache, a money budget, and errored cases scored as failures."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import optuna
import pytest

from contextos_lab.autotune.budget import spend_frame, spend_total
from contextos_lab.autotune.context import prepare
from contextos_lab.autotune.objective import score_config
from contextos_lab.autotune.spec.load import SpecError, load_spec, parse_spec
from contextos_lab.autotune.sweep import sweep
from contextos_lab.gate.run_gate import run_gate
from contextos_lab.harness.protocol import RunResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "standin_llm"


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    """The example folder copied (spec beside its module and sets), sleeps shrunk 100x."""
    dest = tmp_path / "standin"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    spec = (dest / "spec.yaml").read_text(encoding="utf-8")
    spec = spec.replace("time_scale: 0.1 ", "time_scale: 0.002")
    (dest / "spec.yaml").write_text(spec, encoding="utf-8")
    return dest


def test_money_budget_stops_the_study_and_a_rerun_pays_nothing(
    spec_dir: Path, tmp_path: Path
) -> None:
    # full fidelity: every trial pays the whole search set (racing trials pay their stages)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    (spec_dir / "spec.yaml").write_text(text + "fidelity: full\n", encoding="utf-8")
    spec = load_spec(spec_dir / "spec.yaml")
    assert spec.repeats == 3 and spec.max_concurrency == 16 and spec.fidelity == "full"
    out = tmp_path / "out"
    result = sweep(spec, out_dir=out, n_trials=40, progress=False)
    stop = result.study.user_attrs.get("budget_stop")
    assert stop is not None and stop.startswith("money budget")
    spend = spend_frame(result.study)
    assert 2 <= len(spend) < 40
    assert (spend["calls"] + spend["cache_hits"] == len(prepare(spec).search) * 3).all()
    total = spend_total(result.study)
    assert 0 < total["usd"] <= spec.budget.usd  # type: ignore[union-attr]
    paid = total["calls"]
    # the same sweep again (study deleted, its cache kept): every call is a cache hit
    optuna.delete_study(study_name=spec.name, storage=result.storage)
    again = sweep(
        load_spec(spec_dir / "spec.yaml"), out_dir=out, n_trials=len(spend), progress=False
    )
    assert spend_total(again.study)["calls"] == 0
    assert spend_total(again.study)["cache_hits"] == paid
    assert [t.params for t in again.study.trials] == [t.params for t in result.study.trials]


def test_gate_rerun_on_the_same_study_returns_the_same_verdicts(
    spec_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    sweep(load_spec(spec_dir / "spec.yaml"), out_dir=out, n_trials=6, progress=False)
    ledger = tmp_path / "ledger.jsonl"
    first = run_gate(spec_dir / "spec.yaml", out_dir=out, ledger_file=ledger)
    second = run_gate(spec_dir / "spec.yaml", out_dir=out, ledger_file=ledger, reuse=False)
    verdicts = [(d.candidate_id, d.verdict, d.target_p_value) for d in first.run.decisions]
    assert verdicts == [(d.candidate_id, d.verdict, d.target_p_value) for d in second.run.decisions]
    # the case is the unit: repeats are averaged per case before the paired tests
    assert all(d.n_cases == len(first.baseline) for d in first.run.decisions)
    assert first.baseline.index.is_unique


class FlakyStandIn:
    """Fails every third case (as a timed-out API call would)."""

    name, version, max_concurrency = "flaky", "1", 4

    def __init__(self) -> None:
        from standin_llm import StandInLLM  # type: ignore[import-not-found]

        self.inner = StandInLLM(time_scale=0.0)

    def tunable_surfaces(self) -> Any:
        return self.inner.tunable_surfaces()

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None):
        if int(str(case["case_id"])[1:]) % 3 == 0:
            raise TimeoutError("upstream API timed out")
        result: RunResult = self.inner.run(case, config, seed=seed)
        from standin_llm import solve  # type: ignore[import-not-found]

        truth = solve(str(case["op"]), int(case["a"]), int(case["b"]))
        return result.model_copy(update={"decision": str(truth)})


def test_an_errored_case_scores_as_a_failure(spec_dir: Path) -> None:
    spec = load_spec(spec_dir / "spec.yaml")
    ctx = prepare(spec, harness=FlakyStandIn())
    outcome = score_config(ctx, ctx.space.baseline_params())
    errored = [int(c[1:]) % 3 == 0 for c in ctx.search.cases["case_id"]]
    share = sum(errored) / len(errored)
    assert outcome["error_rate"] == pytest.approx(share)
    # every answered case is right (the flaky harness cheats), so all loss is the errors
    assert outcome["scores"]["utility"] == pytest.approx(1 - share)
    assert outcome["scores"]["policy"] == pytest.approx(1 - share)
    assert outcome["scores"]["safety"] <= 1 - share + 1e-9
    assert ctx.meter.as_dict()["errors"] == sum(errored) * spec.repeats


def test_error_rate_is_a_floor(spec_dir: Path) -> None:
    spec = load_spec(spec_dir / "spec.yaml")
    ctx = prepare(spec, harness=FlakyStandIn())
    study = optuna.create_study(directions=spec.directions)
    from contextos_lab.autotune.study.trial_run import run_trial

    trial = study.ask()
    run_trial(ctx, trial, None)
    frozen = study.tell(trial, [0, 0, 0])
    assert frozen.user_attrs["run"]["error_rate"] > 0.3
    assert frozen.constraints["floor_error_rate"] > 0  # breached: the trial is infeasible


def test_bad_harness_path_and_relative_module_resolution(spec_dir: Path) -> None:
    raw = load_spec(spec_dir / "spec.yaml").model_dump(mode="json")
    from contextos_lab.autotune.spec.check import check_spec

    _, harness, _ = check_spec(raw, base_dir=spec_dir)
    assert harness.name == "standin-llm"
    with pytest.raises(SpecError, match="harness: unreachable"):
        check_spec({**raw, "harness": "no_such_module_here:X"}, base_dir=spec_dir)
    assert parse_spec(raw, spec_dir).prices is not None


@pytest.mark.notebook
def test_sweep_command_on_the_stand_in_stops_at_budget_and_emits_gated_proposals_only(
    spec_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`contextos-lab sweep` (notebooks 02 and 03 under papermill, run in the caller's cwd)
    with concurrency, repeats, the cache and a money budget."""
    from contextos_lab.cli.app import main
    from contextos_lab.gate.run_gate import load_gate_run

    cwd = tmp_path / "work"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    spec_path = spec_dir / "spec.yaml"
    code = main(["sweep", str(spec_path), "--out", "out", "--ledger", "ledger.jsonl"])
    assert code == 0
    study = optuna.load_study(
        study_name="standin_llm_accuracy", storage=f"sqlite:///{cwd / 'out' / 'study.db'}"
    )
    assert str(study.user_attrs.get("budget_stop", "")).startswith("money budget")
    assert len(study.trials) < 40
    gate = load_gate_run(cwd / "out" / "gate.json")
    promoted = {d.candidate_id for d in gate.decisions if d.verdict == "promote"}
    printed = capsys.readouterr().out
    if promoted:  # one proposal per sweep, the promoted candidates its operating points
        assert f"1 TuningProposal file with {len(promoted)} operating point(s)" in printed
    else:
        assert "no TuningProposal emitted" in printed
    assert gate.decisions, "the budget still left a front to gate"


def test_a_study_refuses_to_resume_with_other_repeats(spec_dir: Path, tmp_path: Path) -> None:
    from contextos_lab.autotune.study.open import StudyMismatch

    spec = load_spec(spec_dir / "spec.yaml").model_copy(update={"budget": None})
    sweep(spec, out_dir=tmp_path, n_trials=2, progress=False)
    other = spec.model_copy(update={"repeats": 2})
    with pytest.raises(StudyMismatch):
        sweep(other, out_dir=tmp_path, n_trials=3, progress=False)


@pytest.mark.parametrize("repeats", [3, 1])
def test_racing_on_the_noisy_stand_in_gives_promotion_the_doubt_only_where_runs_vary(
    spec_dir: Path, repeats: int
) -> None:
    """The stand-in races with the spec's default promotion: with 3 repeats a case's runs
    disagree, so a config stops as not promoted only when its estimate plus half a standard
    error adds too little; run once per case nothing measures the run noise and promotion
    judges the point estimate (as on the deterministic reference harness)."""
    from contextos_lab.autotune.study.run import run_study

    spec = load_spec(spec_dir / "spec.yaml")
    assert spec.fidelity == "racing" and spec.racing.promotion_z == 0.5
    kwargs = {**spec.harness_kwargs, "time_scale": 0.0}
    spec = spec.model_copy(update={"harness_kwargs": kwargs, "budget": None, "repeats": repeats})
    study = run_study(prepare(spec), "memory", n_trials=25, progress=False)
    reasons = [
        t.user_attrs["racing"]["dropped"]
        for t in study.trials
        if t.user_attrs.get("racing", {}).get("not_promoted")
    ]
    assert reasons
    doubted = [r for r in reasons if "estimate + 0.5 standard error(s)" in r]
    if repeats == 3:
        assert doubted and all("point estimate" not in r for r in reasons)
    else:
        assert not doubted and all("its point estimate" in r for r in reasons)


def test_a_racing_study_spends_its_budget_to_the_end_and_never_over(
    spec_dir: Path, tmp_path: Path
) -> None:
    # racing (the example's default): trials cost from one stage to the whole set, so the
    # start is priced at what trials paid and a trial that would cross stops at a stage
    spec = load_spec(spec_dir / "spec.yaml")
    assert spec.fidelity == "racing"
    dearest = 2.5e-6 * 4000 + 10e-6 * 1000  # far above any stand-in call: a hard bound
    budget = spec.budget.model_copy(update={"usd": 1.5, "usd_per_call_max": dearest})  # type: ignore[union-attr]
    spec = spec.model_copy(update={"budget": budget})
    result = sweep(spec, out_dir=tmp_path / "out", n_trials=200, progress=False)
    stop = result.study.user_attrs.get("budget_stop")
    assert stop is not None, "the study ran out of trials before its budget"
    total = spend_total(result.study)
    assert total["usd"] <= 1.5
    stopped = [t for t in result.study.trials if "budget_stopped" in t.user_attrs]
    assert all(t.state == optuna.trial.TrialState.PRUNED for t in stopped)
    assert len(stopped) <= 1  # the study stops at the first trial the budget stopped
    if stopped:
        assert stop.startswith("money budget") and f"trial {stopped[0].number} stopped" in stop
