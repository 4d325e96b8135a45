"""The gate and policy cases no rule judges: a policy missing on both sides of a pair is not
scored (left out of the floor and the McNemar test, named in the decision's notes); missing on
one side only it is still a violation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from contextos_lab.gate.run_gate import load_gate_run, run_gate
from contextos_lab.gate.verdict import GateGuardrails, decide
from contextos_lab.proposals.files.emit import emit
from contextos_lab.reports.gate_summary import guardrail_status
from tests.gate.conftest import study_for
from tests.gate.gate_toy import write_project

N = 40
RULED = 10  # c0..c9 have a rule; c10..c39 (faq, chitchat) have none


def _frame(policy: list[float], utility: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "policy": policy,
            "safety": 1.0,
            "utility": utility,
            "latency": 100.0,
            "economics": 0.1,
        },
        index=pd.Index([f"c{i}" for i in range(N)], name="case_id"),
    )


INTENTS = {f"c{i}": ("refund" if i < RULED else ("faq" if i % 2 else "chitchat")) for i in range(N)}


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text("<html>gate report</html>")
    return path


def _policy(violations: int) -> list[float]:
    return [0.0] * violations + [1.0] * (RULED - violations) + [np.nan] * (N - RULED)


def _decide(base: pd.DataFrame, cand: pd.DataFrame, floor: float):
    (d,) = decide(
        base,
        {"cand": cand},
        target_metric="utility",
        target_direction="increase",
        guardrails=GateGuardrails(policy_floor=floor, safety_floor=0.0),
        n_boot=200,
        intents=INTENTS,
    )
    return d


def test_the_floor_and_the_test_see_only_the_scored_cases() -> None:
    # 2 of the 10 judged cases violate: 0.8 over the scored cases (a silent 1.0 on the other 30
    # would read 0.95 and hold a 0.9 floor; the old gate made them violations, mean 0.2)
    d = _decide(_frame(_policy(0)), _frame(_policy(2)), floor=0.9)
    assert d.verdict == "regression"
    assert any("policy floor breached: held-out mean 0.8000 < 0.9" in r for r in d.reasons)
    policy = d.test_for("policy")
    assert policy.n == RULED and policy.candidate_mean == 0.8 and policy.baseline_mean == 1.0
    (note,) = d.notes
    assert note.startswith("policy not scored for intent(s) chitchat, faq (30 of 40 held-out")
    assert "cover the other 10 case(s)" in note
    ok = _decide(_frame(_policy(0)), _frame(_policy(0), utility=1.0), floor=1.0)
    assert ok.verdict != "regression"  # no scored case breaks the 1.0 floor
    assert not any(r.startswith("policy") for r in ok.reasons)  # no breach, no rise
    assert not ok.reasons[0].startswith("not computable")  # unscored is not a gap either


def test_no_scored_case_is_neither_a_pass_nor_a_breach() -> None:
    nothing = [np.nan] * N
    d = _decide(_frame(nothing), _frame(nothing), floor=1.0)
    assert d.verdict != "regression" and d.test_for("policy").n == 0
    assert not d.reasons[0].startswith("not computable")
    (note,) = d.notes
    assert "40 of 40 held-out case(s)" in note and "no policy floor or test applies" in note


def test_a_policy_missing_on_one_side_only_is_still_a_violation() -> None:
    cand = _policy(0)
    cand[3] = np.nan  # a ruled case the candidate has no policy score for: a gap, not unscored
    d = _decide(_frame(_policy(0)), _frame(cand), floor=1.0)
    assert d.verdict == "regression"
    assert d.test_for("policy").candidate_mean == 0.9  # c3 counted as a violation
    assert "30 of 40" in d.notes[0]


def test_the_gate_end_to_end_with_policy_judged_on_some_or_no_cases(
    tmp_path: Path, ledger_file: Path
) -> None:
    # the toy's unsafe knob approves the held-out risky cases (every 10th): with policy judged
    # on those cases only it is still caught, on 20 scored cases instead of 200
    spec = write_project(
        tmp_path / "some", evaluate="tests.gate.gate_toy:evaluate_policy_risky_only"
    )
    out = tmp_path / "some_out"
    run = run_gate(spec, storage=study_for(spec, out), out_dir=out, ledger_file=ledger_file).run
    assert run.decisions and all(d.verdict == "regression" for d in run.decisions)
    for d in run.decisions:
        assert d.test_for("policy").n == 20
        assert d.notes[0].startswith("policy not scored (180 of 200 held-out case(s)")
    # no case judged: the gate runs, says so, and gate.json reads back (null, not NaN)
    spec = write_project(
        tmp_path / "none", tunable_surfaces=["top_k"], n_trials=10,
        evaluate="tests.gate.gate_toy:evaluate_policy_unscored",
    )  # fmt: skip
    out = tmp_path / "none_out"
    run = run_gate(spec, storage=study_for(spec, out), out_dir=out, ledger_file=ledger_file).run
    assert run.decisions and run.baseline_heldout_means["policy"] is None
    assert "NaN" not in (out / "gate.json").read_text(encoding="utf-8")
    saved = load_gate_run(out / "gate.json")
    for d in saved.decisions:
        assert "no policy floor or test applies" in d.notes[0]
        assert d.test_for("policy").n == 0 and math.isnan(d.test_for("policy").delta)
        assert not any(r.startswith("policy") for r in d.reasons)
        status = guardrail_status(saved, d).set_index("guardrail")
        assert status.loc["policy>=1.0", "status"] == "not scored"
    promoted = [d for d in saved.decisions if d.verdict == "promote"]
    assert promoted  # top_k 1 saves cost on held-out; policy not scored does not block it
    (path,) = emit(saved, _report(tmp_path), out).tuning_proposals
    gate = json.loads(Path(path).read_text(encoding="utf-8"))["gate"]
    assert gate["notes"] == list(promoted[0].notes)
