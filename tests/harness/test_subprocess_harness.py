"""The subprocess harness: JSON in, JSON lines out, every call on the record, failures named."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import optuna
import pandas as pd
import pytest

from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    BatchHarness,
    Fault,
    RunResult,
    baseline_config,
    fault_of,
    run_cases,
)
from contextos_lab.harness.runner import read_records, retry_chain
from contextos_lab.harness.subprocess_harness import (
    PROTOCOL,
    HarnessFailure,
    SubprocessHarness,
    load_surfaces,
)
from contextos_lab.schemas.surface import TunableSurface

PY = sys.executable
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "external_harness"


@pytest.fixture
def rec(tmp_path: Path) -> Path:
    return tmp_path / "feedback_record.jsonl"


@pytest.fixture(scope="module")
def cases() -> pd.DataFrame:
    lines = (EXAMPLE / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return pd.DataFrame([json.loads(line) for line in lines])


@pytest.fixture
def example(rec: Path) -> SubprocessHarness:
    return SubprocessHarness([PY, str(EXAMPLE / "harness.py")], name="example", record_file=rec)


def script(tmp_path: Path, body: str, name: str = "h.py") -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [PY, str(path)]


def accuracy(cases: pd.DataFrame, results: pd.DataFrame) -> float:
    return float((results["decision"] == cases["expected_decision"]).mean())


# --- round trip ------------------------------------------------------------------------------


def test_surfaces_are_declared_by_the_program(example: SubprocessHarness, rec: Path) -> None:
    surfaces = example.tunable_surfaces()
    assert list(surfaces) == load_surfaces(EXAMPLE / "surfaces.json")
    assert {s.name for s in surfaces} == {"top_k", "min_confidence"}
    assert baseline_config(example) == {"top_k": 2, "min_confidence": 0.5}
    (record,) = read_records(rec).records
    assert record.command[-1] == "--surfaces" and record.exit_code == 0
    example.tunable_surfaces()  # cached: no second call
    assert len(read_records(rec).records) == 1


def test_round_trip_through_the_example(
    example: SubprocessHarness, cases: pd.DataFrame, rec: Path
) -> None:
    assert isinstance(example, BatchHarness)
    frame = run_cases(example, cases, {"top_k": 3, "min_confidence": 0.4})
    assert list(frame.columns) == list(RESULT_COLUMNS)
    assert list(frame["case_id"]) == list(cases["case_id"])
    assert frame["error"].isna().all() and (frame["wall_ms"] > 0).all()
    assert all(len(ev) == 3 for ev in frame["evidence_used"])
    record = read_records(rec).records[-1]
    assert frame.attrs["command_id"] == record.command_id
    assert record.exit_code == 0 and record.stdout_lines == len(cases)
    assert record.stderr_tail == f"answered {len(cases)} cases"
    again = example.run_batch(cases, {"top_k": 3, "min_confidence": 0.4})
    assert again.drop(columns="wall_ms").equals(frame.drop(columns="wall_ms"))


def test_knobs_trade_accuracy_for_tokens(example: SubprocessHarness, cases: pd.DataFrame) -> None:
    small = example.run_batch(cases, {"top_k": 1, "min_confidence": 0.5})
    large = example.run_batch(cases, {"top_k": 6, "min_confidence": 0.5})
    assert large["tokens"].mean() > 2 * small["tokens"].mean()
    assert accuracy(cases, large) > accuracy(cases, small)


def test_single_case_run(example: SubprocessHarness, cases: pd.DataFrame) -> None:
    case = cases.iloc[0].to_dict()
    result = example.run(case, {"top_k": 2, "min_confidence": 0.5})
    assert isinstance(result, RunResult) and result.case_id == case["case_id"]


def test_the_program_sees_the_documented_request(tmp_path: Path, rec: Path) -> None:
    argv = script(
        tmp_path,
        """
        import json, sys
        req = json.load(sys.stdin)
        for case in req["cases"]:
            print(json.dumps({"case_id": case["case_id"], "decision": "echo",
                              "output_text": json.dumps(req, sort_keys=True),
                              "tokens": 1, "latency_ms": 0}))
        """,
    )
    harness = SubprocessHarness(argv, record_file=rec, surfaces=[])
    cases = pd.DataFrame({"case_id": ["a"], "n": [1.5], "missing": [float("nan")]})
    (result,) = harness.run_batch(cases, {"k": 2}).itertuples()
    request = json.loads(result.output_text)
    assert request == {
        "protocol": PROTOCOL,
        "config": {"k": 2},
        "cases": [{"case_id": "a", "n": 1.5, "missing": None}],
    }


# --- failures are named, recorded, and typed -------------------------------------------------

ONE_CASE = pd.DataFrame({"case_id": ["c1", "c2"]})
GOOD = '{"case_id": "%s", "decision": "d", "output_text": "", "tokens": 1, "latency_ms": 0}'

FAILURES: dict[str, tuple[str, str]] = {
    "crash": (
        "import sys; sys.stdin.read(); print('Traceback: KeyError', file=sys.stderr); sys.exit(2)",
        "exited with code 2 (stderr: Traceback: KeyError)",
    ),
    "not_an_object": ("import sys; sys.stdin.read(); print('[1, 2]')", "not a JSON object"),
    "invalid_field": (
        "import sys; sys.stdin.read(); "
        'print(\'{"case_id": "c1", "decision": "d", "output_text": "", '
        '"tokens": -5, "latency_ms": 0}\')',
        "invalid result on stdout line 1: tokens",
    ),
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_bad_harness_output_fails_with_a_reason(kind: str, tmp_path: Path, rec: Path) -> None:
    body, reason = FAILURES[kind]
    harness = SubprocessHarness(script(tmp_path, body), record_file=rec, surfaces=[])
    with pytest.raises(HarnessFailure) as info:
        harness.run_batch(ONE_CASE, {})
    failure = info.value
    assert reason in failure.reason
    assert failure.protocol == (kind != "crash")  # a crash may be retried, a bad line not
    assert failure.record is not None
    assert failure.record.command_id == read_records(rec).records[-1].command_id
    failed = failure.as_results(ONE_CASE)
    assert list(failed.columns) == list(RESULT_COLUMNS)
    assert (failed["error"] == failure.reason).all()
    assert {fault_of(f) for f in failed["fault"]} == {Fault.protocol if failure.protocol else None}
    assert failed["latency_ms"].isna().all()  # an errored run has no latency
    assert failed.attrs["command_id"] == failure.record.command_id


#: c1 is answered well, then the program breaks the protocol: c1 keeps its answer.
PARTIAL: dict[str, tuple[str, str]] = {
    "malformed_json": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}'); print('results: ok')",
        "malformed JSON on stdout line 2",
    ),
    "missing_case": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}')",
        "no result for 1 of 2 cases (first: 'c2')",
    ),
    "unknown_case": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}'); print('{GOOD % 'zz'}')",
        "unknown case id 'zz'",
    ),
    "answered_twice": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}'); print('{GOOD % 'c1'}')",
        "answered twice",
    ),
    "null_number": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}'); "
        'print(\'{"case_id": "c2", "decision": "d", "output_text": "", "tokens": null, '
        '"latency_ms": 0}\')',
        "invalid result on stdout line 2: tokens",
    ),
    "crash_after_one": (
        f"import sys; sys.stdin.read(); print('{GOOD % 'c1'}', flush=True); "
        "print('TypeError: x is undefined', file=sys.stderr); "
        "print('Node.js v20.0.0', file=sys.stderr); sys.exit(1)",
        "harness exited with code 1 (stderr: TypeError: x is undefined)",
    ),
}


@pytest.mark.parametrize("kind", list(PARTIAL))
def test_answered_cases_survive_a_bad_line(kind: str, tmp_path: Path, rec: Path) -> None:
    body, reason = PARTIAL[kind]
    harness = SubprocessHarness(script(tmp_path, body), record_file=rec, surfaces=[])
    frame = harness.run_batch(ONE_CASE, {})
    by_id = frame.set_index("case_id")
    assert by_id.loc["c1", "decision"] == "d" and pd.isna(by_id.loc["c1", "error"])
    assert reason in by_id.loc["c2", "error"]
    protocol = kind != "crash_after_one"
    assert by_id.loc["c2", "error"].startswith("harness protocol error") == protocol
    assert fault_of(by_id.loc["c2", "fault"]) == (Fault.protocol if protocol else None)  # typed
    assert fault_of(by_id.loc["c1", "fault"]) is None
    assert pd.isna(by_id.loc["c2", "latency_ms"])
    assert frame.attrs["command_id"] == read_records(rec).records[-1].command_id


def test_extra_fields_are_attributes_and_cost_usd_is_the_cost(tmp_path: Path, rec: Path) -> None:
    line = (
        '{"case_id": "%s", "decision": "d", "output_text": "", "tokens": 1, "latency_ms": 3, '
        '"cost_usd": 0.25, "model_used": "m-1", "retries": 2}'
    )
    body = f"import sys; sys.stdin.read(); print('{line % 'c1'}'); print('{line % 'c2'}')"
    harness = SubprocessHarness(script(tmp_path, body), record_file=rec, surfaces=[])
    frame = harness.run_batch(ONE_CASE, {})
    assert frame["cost_usd"].tolist() == [0.25, 0.25]
    assert frame["attributes"].tolist() == [{"model_used": "m-1", "retries": 2}] * 2
    assert frame["error"].isna().all()


def test_a_hung_harness_is_killed_and_fails(tmp_path: Path, rec: Path) -> None:
    argv = script(tmp_path, "import time\ntime.sleep(60)\n")
    harness = SubprocessHarness(argv, record_file=rec, surfaces=[], timeout=1.0)
    with pytest.raises(HarnessFailure, match="harness hung: timeout after 1s"):
        harness.run_batch(ONE_CASE, {})
    assert read_records(rec).records[-1].exit_code is None


def test_a_missing_program_fails(rec: Path) -> None:
    harness = SubprocessHarness(["no-such-harness-8d1c"], record_file=rec, surfaces=[])
    with pytest.raises(HarnessFailure, match="did not run: command not found"):
        harness.run_batch(ONE_CASE, {})


def test_malformed_surfaces(tmp_path: Path, rec: Path) -> None:
    harness = SubprocessHarness(script(tmp_path, 'print(\'[{"name": "x"}]\')'), record_file=rec)
    with pytest.raises(HarnessFailure, match="malformed surfaces"):
        harness.tunable_surfaces()


def test_retries_are_chained(tmp_path: Path, rec: Path) -> None:
    flag = tmp_path / "second_attempt"
    argv = script(
        tmp_path,
        f"""
        import json, pathlib, sys
        req = json.load(sys.stdin)
        flag = pathlib.Path({str(flag)!r})
        if not flag.exists():
            flag.touch()
            sys.exit("first attempt fails")
        for case in req["cases"]:
            print(json.dumps({{"case_id": case["case_id"], "decision": "d",
                              "output_text": "", "tokens": 1, "latency_ms": 0}}))
        """,
    )
    harness = SubprocessHarness(argv, record_file=rec, surfaces=[], retries=2)
    frame, record = harness.run_batch_recorded(ONE_CASE, {})
    chain = retry_chain(read_records(rec).records, record.command_id)
    assert [r.exit_code for r in chain] == [1, 0]
    assert chain[1].parent_command_id == chain[0].command_id
    assert list(frame["case_id"]) == ["c1", "c2"]

    always = SubprocessHarness(
        script(tmp_path, "import sys; sys.exit(3)", "bad.py"), record_file=rec, surfaces=[],
        retries=2,
    )  # fmt: skip
    with pytest.raises(HarnessFailure) as info:
        always.run_batch(ONE_CASE, {})
    assert info.value.record is not None
    failed_chain = retry_chain(read_records(rec).records, info.value.record.command_id)
    assert [r.exit_code for r in failed_chain] == [3, 3, 3]


# --- a study tunes the external harness through the adapter ----------------------------------


def suggest(trial: optuna.Trial, surfaces: list[TunableSurface]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for s in surfaces:
        assert s.low is not None and s.high is not None
        if s.kind == "int":
            config[s.name] = trial.suggest_int(s.name, int(s.low), int(s.high))
        else:
            config[s.name] = trial.suggest_float(s.name, s.low, s.high, step=s.step)
    return config


def objective_for(harness: SubprocessHarness, cases: pd.DataFrame):
    surfaces = list(harness.tunable_surfaces())

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        config = suggest(trial, surfaces)
        try:
            results, record = harness.run_batch_recorded(cases, config)
        except HarnessFailure as failure:
            trial.set_user_attr("failure_reason", failure.reason)
            if failure.record is not None:
                trial.set_user_attr("command_id", failure.record.command_id)
            raise
        trial.set_user_attr("command_id", record.command_id)
        return accuracy(cases, results), float(results["tokens"].mean())

    return objective


def test_a_study_tunes_the_example_harness(
    example: SubprocessHarness, cases: pd.DataFrame, rec: Path
) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        directions=["maximize", "minimize"], sampler=optuna.samplers.TPESampler(seed=0)
    )
    study.optimize(objective_for(example, cases), n_trials=8, catch=(HarnessFailure,))
    states = {t.state for t in study.trials}
    assert states == {optuna.trial.TrialState.COMPLETE}
    by_id = {r.command_id: r for r in read_records(rec).records}
    for trial in study.trials:
        record = by_id[trial.user_attrs["command_id"]]
        assert record.exit_code == 0 and record.stdout_lines == len(cases)
    assert len({t.params["top_k"] for t in study.trials}) > 1
    assert study.best_trials  # a Pareto front of accuracy vs tokens


def test_a_failing_harness_fails_trials_not_the_study(
    tmp_path: Path, cases: pd.DataFrame, rec: Path
) -> None:
    # the example harness behind a wrapper that prints garbage whenever top_k >= 4
    argv = script(
        tmp_path,
        f"""
        import json, subprocess, sys
        raw = sys.stdin.read()
        if json.loads(raw)["config"]["top_k"] >= 4:
            print("Segmentation fault (core dumped)")
            sys.exit(0)
        done = subprocess.run([sys.executable, {str(EXAMPLE / "harness.py")!r}], input=raw,
                              text=True)
        sys.exit(done.returncode)
        """,
    )
    harness = SubprocessHarness(
        argv, record_file=rec, surfaces=EXAMPLE / "surfaces.json", timeout=20
    )
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        directions=["maximize", "minimize"], sampler=optuna.samplers.TPESampler(seed=0)
    )
    study.optimize(objective_for(harness, cases), n_trials=8, catch=(HarnessFailure,))
    failed = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(failed) + len(complete) == 8 and failed and complete
    for trial in failed:
        assert trial.params["top_k"] >= 4
        reason = trial.user_attrs["failure_reason"]
        assert reason.startswith("harness protocol error: malformed JSON on stdout line 1")
    by_id = {r.command_id: r for r in read_records(rec).records}
    assert all(t.user_attrs["command_id"] in by_id for t in study.trials)
