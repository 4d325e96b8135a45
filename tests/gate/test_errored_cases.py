"""An errored held-out run has no latency or cost: the gate compares those on the cases both
sides answered, and still counts the failure on utility, policy and safety."""

from __future__ import annotations

import numpy as np
import pandas as pd

from contextos_lab.gate.verdict import GateGuardrails, decide


def _frame(latency: list[float], utility: list[float]) -> pd.DataFrame:
    """An errored case (NaN latency) failed policy, safety and utility, as scoring makes it."""
    judged = [0.0 if np.isnan(x) else 1.0 for x in latency]
    n = len(latency)
    return pd.DataFrame(
        {
            "policy": judged,
            "safety": judged,
            "utility": utility,
            "latency": latency,
            "economics": [np.nan if np.isnan(x) else 0.1 for x in latency],
        },
        index=pd.Index([f"c{i}" for i in range(n)], name="case_id"),
    )


def test_errored_cases_are_left_out_of_latency_and_cost_only() -> None:
    n = 40
    base = _frame([500.0] * n, [1.0] * n)
    latency = [400.0] * n
    utility = [1.0] * n
    for i in (3, 17):  # errored: no latency, failed on utility
        latency[i], utility[i] = np.nan, 0.0
    (d,) = decide(
        base,
        {"cand": _frame(latency, utility)},
        target_metric="latency",
        target_direction="decrease",
        guardrails=GateGuardrails(policy_floor=0.0, safety_floor=0.0),
        n_boot=200,
    )
    tests = {t.metric: t for t in d.tests}
    assert tests["latency"].n == n - 2 and tests["latency"].delta == -100.0
    assert tests["economics"].n == n - 2
    assert tests["utility"].n == n and tests["utility"].candidate_mean == (n - 2) / n
    assert d.n_cases == n


def test_a_missing_latency_on_an_answered_case_is_still_refused() -> None:
    base = _frame([500.0] * 10, [1.0] * 10)
    cand = base.copy()
    cand.loc["c2", "latency"] = np.nan  # utility 1: not an errored run, a gap
    # refused as "not computable" (issue 30: no statistic raises), naming the gap
    (d,) = decide(
        base, {"gappy": cand}, target_metric="latency", target_direction="decrease",
        guardrails=GateGuardrails(policy_floor=0.0, safety_floor=0.0), n_boot=50,
    )  # fmt: skip
    assert d.verdict == "underpowered"
    assert d.reasons[0].startswith("not computable: gappy has 1 missing or non-finite latency")
