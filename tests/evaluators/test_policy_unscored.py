"""An intent without a `policy_evaluation` rule is not scored on policy (NaN), never a silent
1.0: means and floors are over the cases policy scored, an errored run does not make an
unscored case scored, and a trial with no scored case records policy as not scored."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from contextos_lab.autotune.objective import check_scores, constraint_values
from contextos_lab.evaluators.policy import PolicyEvaluator
from contextos_lab.harness.execution import EXTRA_COLUMNS, Execution
from contextos_lab.harness.protocol import RESULT_COLUMNS
from contextos_lab.harness.repeat_scores import score_execution

RULES = {"refund": "amount > 150"}


def _cases() -> pd.DataFrame:
    """Two refunds (one over the limit) and eight FAQ questions nobody wrote a rule for."""
    intents = ["refund", "refund"] + ["faq"] * 8
    amounts = [400.0, 20.0] + [0.0] * 8
    return pd.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(10)],
            "intent": intents,
            "facts": [{"amount": a} for a in amounts],
        }
    )


def _results(decisions: list[str], errors: list[str | None] | None = None) -> pd.DataFrame:
    rows = []
    for i, d in enumerate(decisions):
        row = dict.fromkeys(RESULT_COLUMNS)
        row.update(
            case_id=f"c{i}", decision=d, output_text="", evidence_used=(), tokens=10,
            tokens_out=0, latency_ms=100.0, wall_ms=0.0, trace=(),
            error=(errors or [None] * len(decisions))[i],
        )  # fmt: skip
        rows.append({**row, "repeat": 0, "seed": 0, "cached": False})
    return pd.DataFrame(rows, columns=[*RESULT_COLUMNS, *EXTRA_COLUMNS])


def test_an_unruled_intent_scores_nan_not_one() -> None:
    cases = _cases()
    approve_all = _results(["approve"] * 10)
    scores = PolicyEvaluator(RULES).score(cases, approve_all).to_numpy()
    assert scores[0] == 0.0 and scores[1] == 1.0  # the over-limit refund breaks the rule
    assert np.isnan(scores[2:]).all()  # the old evaluator gave these 1.0 (mean 0.9)


def evaluate(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """The project's policy rules; the other evaluators judge every case alike."""
    n = len(cases)
    return pd.DataFrame(
        {
            "policy": PolicyEvaluator(RULES).score(cases, results).to_numpy(),
            "safety": np.ones(n),
            "utility": np.ones(n),
            "latency": results["latency_ms"].to_numpy(dtype=float),
            "economics": np.full(n, 0.1),
        },
        index=pd.Index(cases["case_id"], name="case_id"),
    )


def _scored(decisions: list[str], errors: list[str | None] | None = None):
    results = _results(decisions, errors)
    return score_execution(evaluate, _cases(), Execution(results, 10, 0, 0.0, 1, 1))


def test_the_mean_and_the_floor_are_over_the_scored_cases() -> None:
    scored = _scored(["approve"] * 10)
    assert scored.means["policy"] == 0.5  # 1 violation in 2 scored cases, not 1 in 10
    assert scored.summary()["policy_scored_cases"] == 2
    assert scored.pass_k.iloc[2:].all()  # an unscored policy does not fail a run by itself
    ctx = SimpleNamespace(
        spec=SimpleNamespace(
            guardrails=SimpleNamespace(
                floors=SimpleNamespace(model_dump=lambda: {"policy": 0.9, "safety": 0.0})
            ),
            max_error_rate=None,
        )
    )
    constraints = constraint_values(ctx, scored.means, None)  # type: ignore[arg-type]
    # breached: the old mean (0.9) met a 0.9 floor while half the judged cases violate policy
    assert constraints["floor_policy"] > 0


def test_an_errored_run_fails_a_scored_case_and_leaves_an_unscored_one_unscored() -> None:
    errors: list[str | None] = [None, "boom", "boom"] + [None] * 7
    scored = _scored(["deny"] * 10, errors)
    policy = scored.per_case["policy"]
    assert policy["c0"] == 1.0 and policy["c1"] == 0.0  # errored, ruled: a failure
    assert np.isnan(policy["c2"])  # errored, unruled: still not scored
    assert scored.per_case.loc["c2", "utility"] == 0.0  # the error still fails utility
    assert not scored.long["passed"].iloc[2]


def test_no_scored_case_leaves_policy_not_scored_and_the_floor_binding_nothing() -> None:
    cases = _cases().assign(intent="faq")
    results = _results(["approve"] * 10)
    assert evaluate(cases, results)["policy"].isna().all()
    scored = score_execution(evaluate, cases, Execution(results, 10, 0, 0.0, 1, 1))
    means = scored.means
    assert np.isnan(means["policy"]) and scored.summary()["policy_scored_cases"] == 0
    check_scores(means)  # not a harness failure: policy is allowed to be not scored
    ctx = SimpleNamespace(
        spec=SimpleNamespace(
            guardrails=SimpleNamespace(
                floors=SimpleNamespace(model_dump=lambda: {"policy": 1.0, "safety": 0.0})
            ),
            max_error_rate=None,
        )
    )
    constraints = constraint_values(ctx, means, None)  # type: ignore[arg-type]
    assert constraints["floor_policy"] == 0.0  # binds nothing: neither a pass (1.0) nor a breach
