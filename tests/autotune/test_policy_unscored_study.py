"""A real study whose evaluator leaves policy unscored on some or all cases (an intent with no
`policy_evaluation` rule): trials score policy over the scored cases (racing agrees with the
full set), a trial with nothing scored completes with policy "not scored", and front.json and
the sweep report say so (null, "not scored"), never 1.0."""

from __future__ import annotations

import json
import math
from pathlib import Path

from optuna.trial import TrialState

from contextos_lab.autotune.objective import score_config
from contextos_lab.autotune.spec.load import parse_spec
from contextos_lab.autotune.study.run import run_study
from contextos_lab.autotune.sweep import sweep, write_front_json
from contextos_lab.reports.sweep_summary import summary_markdown
from tests.autotune.conftest import racing_ctx, toy_spec_dict


def test_racing_scores_policy_over_the_judged_cases_as_the_full_set_does(
    big_case_dir: Path,
) -> None:
    ctx = racing_ctx(
        big_case_dir,
        evaluate="tests.autotune.toy:evaluate_policy_risky_only",
        sampler={"kind": "random", "seed": 3},
    )
    study = run_study(ctx, "memory", n_trials=20, progress=False)
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    pruned = study.get_trials(states=(TrialState.PRUNED,))
    assert not study.get_trials(states=(TrialState.FAIL,))
    risky = int(ctx.search.cases["risky"].sum())  # the judged cases: 150 of 450
    for t in complete[:5]:
        assert t.user_attrs["scores"] == score_config(ctx, t.params)["scores"]
        assert t.user_attrs["run"]["policy_scored_cases"] == risky
        assert t.user_attrs["scores"]["policy"] == 1.0
    # approving risky cases violates policy on every judged case: 0.0 over the scored cases
    # (a silent 1.0 on the other 300 would read 0.67); racing still drops those on the floor
    breaking = [t for t in study.trials if t.params["approval_threshold"] < 0.6]
    assert breaking and all(t in pruned for t in breaking)
    assert all(t.user_attrs["racing"]["dropped"].startswith("floor policy") for t in breaking)
    kept = study.trials[0].user_attrs["racing_reference"]
    assert kept["means"] == {"policy": 1.0}  # the mean racing pairs with, as raced


def test_a_trial_with_no_scored_case_records_policy_as_not_scored(big_case_dir: Path) -> None:
    spec = parse_spec(
        toy_spec_dict(
            evaluate="tests.autotune.toy:evaluate_policy_unscored",
            sampler={"kind": "random", "seed": 3},
        ),
        big_case_dir,
    )
    out = big_case_dir / "out"
    result = sweep(
        spec, out_dir=out, n_trials=6, storage="memory", progress=False, runs=False,
        fidelity="full",
    )  # fmt: skip
    trials = result.study.trials
    assert all(t.state == TrialState.COMPLETE for t in trials)  # not a harness failure
    for t in trials:
        assert math.isnan(t.user_attrs["scores"]["policy"])
        assert t.user_attrs["run"]["policy_scored_cases"] == 0
        assert t.constraints["floor_policy"] == 0.0  # binds nothing
    path = write_front_json(result, out)

    def strict(token: str) -> None:
        raise ValueError(f"front.json holds {token}, which is not JSON")

    report = json.loads(path.read_text(encoding="utf-8"), parse_constant=strict)
    assert report["baseline_scores"]["policy"] is None
    assert report["candidates"] and all(c["policy"] is None for c in report["candidates"])
    assert all(c["policy_scored_cases"] == 0 for c in report["candidates"])
    assert "| policy | not scored | not scored | n/a |" in summary_markdown(result)
