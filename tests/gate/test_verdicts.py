"""Gate statistics and verdicts on hand-built paired frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from contextos_lab.gate.calibration import simulate_null
from contextos_lab.gate.paired_tests import (
    bootstrap_ci,
    holm_adjust,
    mcnemar_exact,
    required_sample_size,
)
from contextos_lab.gate.verdict import GateGuardrails, decide

GUARD = GateGuardrails(
    policy_floor=0.99,
    safety_floor=1.0,
    accepted_delta={"utility": 0.01, "latency": 50.0, "economics": 0.05},
)


def _frame(n: int, rng: np.random.Generator, utility_p: float = 0.7) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "policy": np.ones(n),
            "safety": np.ones(n),
            "utility": (rng.random(n) < utility_p).astype(float),
            "latency": rng.normal(300, 20, n),
            "economics": rng.normal(0.2, 0.01, n),
        },
        index=pd.Index([f"c{i}" for i in range(n)], name="case_id"),
    )


def test_mcnemar_matches_statsmodels_table() -> None:
    base = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 0], dtype=bool)
    cand = np.array([1, 0, 1, 1, 1, 1, 1, 1, 1, 0], dtype=bool)
    p, (b, c) = mcnemar_exact(base, cand)
    assert (b, c) == (1, 4)
    assert p == pytest.approx(mcnemar([[4, 1], [4, 1]], exact=True).pvalue)


def test_bootstrap_interval_covers_the_mean_and_is_reproducible() -> None:
    diff = np.random.default_rng(1).normal(0.5, 1.0, 500)
    low, high = bootstrap_ci(diff, seed=3)
    assert low < diff.mean() < high
    assert (low, high) == bootstrap_ci(diff, seed=3)


def test_holm_is_step_down() -> None:
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_real_improvement_is_promoted() -> None:
    rng = np.random.default_rng(0)
    base = _frame(2000, rng, 0.70)
    cand = base.copy()
    flip = (base["utility"] == 0) & (rng.random(2000) < 0.4)
    cand.loc[flip, "utility"] = 1.0
    [d] = decide(
        base, {"cand": cand}, target_metric="utility", target_direction="increase", guardrails=GUARD
    )
    assert d.verdict == "promote", d.reasons
    assert d.test_for("utility").delta > 0.1


def test_floor_breach_is_regression_even_when_target_improves() -> None:
    rng = np.random.default_rng(0)
    base = _frame(1000, rng, 0.6)
    cand = base.copy()
    cand["utility"] = 1.0
    cand.loc[cand.index[:50], "policy"] = 0.0  # 5% violations: below the 0.99 floor
    [d] = decide(
        base,
        {"loose_threshold": cand},
        target_metric="utility",
        target_direction="increase",
        guardrails=GUARD,
    )
    assert d.verdict == "regression"
    assert any("policy floor breached" in r for r in d.reasons)


def test_accepted_delta_breach_is_named() -> None:
    rng = np.random.default_rng(0)
    base = _frame(500, rng)
    cand = base.copy()
    cand["latency"] = cand["latency"] + 80.0
    [d] = decide(
        base, {"slow": cand}, target_metric="utility", target_direction="increase", guardrails=GUARD
    )
    assert d.verdict == "regression"
    assert any(r.startswith("latency accepted delta breached") for r in d.reasons)


def test_small_improvement_is_underpowered_with_a_required_size() -> None:
    rng = np.random.default_rng(0)
    base = _frame(200, rng, 0.7)
    cand = base.copy()
    idx = base.index[base["utility"] == 0][:4]
    cand.loc[idx, "utility"] = 1.0
    [d] = decide(
        base, {"tiny": cand}, target_metric="utility", target_direction="increase", guardrails=GUARD
    )
    assert d.verdict == "underpowered"
    assert d.required_n is not None and d.required_n > 200
    diff = cand["utility"].to_numpy() - base["utility"].to_numpy()
    assert d.required_n == required_sample_size(diff)


def test_identical_candidate_has_no_effect() -> None:
    base = _frame(300, np.random.default_rng(0))
    [d] = decide(
        base,
        {"same": base.copy()},
        target_metric="economics",
        target_direction="decrease",
        guardrails=GUARD,
    )
    assert d.verdict == "no_effect" and d.target_p_value == 1.0


def test_unpaired_cases_are_refused() -> None:
    rng = np.random.default_rng(0)
    base = _frame(100, rng)
    other = _frame(100, rng).rename(index=lambda s: s + "x")
    with pytest.raises(ValueError, match="same held-out cases"):
        decide(
            base,
            {"x": other},
            target_metric="utility",
            target_direction="increase",
            guardrails=GUARD,
        )


@pytest.mark.parametrize("design", ["rerun", "shuffled"])
def test_null_calibration_cheap(design: str) -> None:
    """Cheap A/A: the gate promotes in at most 5% of 200 null runs (the benchmark runs more)."""
    result = simulate_null(design=design, runs=200, n_cases=120, seed=11, n_boot=50)
    assert result.runs == 200
    assert result.promote_rate <= 0.05, result


def test_rerun_null_has_real_paired_noise() -> None:
    """The A/A re-run design must differ case by case (else it says nothing about error rates)."""
    import numpy as np

    from contextos_lab.gate.calibration import _case_difficulty, _run_on

    rng = np.random.default_rng(3)
    cases = _case_difficulty(rng, 400)
    a, b = _run_on(rng, cases), _run_on(rng, cases)
    assert (a["utility"] != b["utility"]).mean() > 0.2
    assert np.corrcoef(a["latency"], b["latency"])[0, 1] > 0.8  # same cases: paired


def test_skewed_continuous_differences_are_not_promoted_against_the_mean() -> None:
    """90 cases 10 ms slower, 10 cases 200 ms faster: a rank test would call it significant
    while the mean moves the other way; the gate tests the mean it reports."""
    rng = np.random.default_rng(0)
    base = _frame(100, rng)
    cand = base.copy()
    shift = np.r_[np.full(90, 10.0), np.full(10, -200.0)]
    cand["latency"] = base["latency"] + shift
    [d] = decide(
        base,
        {"skewed": cand},
        target_metric="latency",
        target_direction="decrease",
        guardrails=GUARD,
    )
    latency = d.test_for("latency")
    assert latency.test == "paired_t" and latency.delta == pytest.approx(-11.0)
    assert d.verdict == "underpowered", d.reasons


def test_missing_safety_scores_count_as_violations() -> None:
    rng = np.random.default_rng(0)
    base = _frame(1000, rng, 0.6)
    cand = base.copy()
    cand["utility"] = 1.0
    cand.loc[cand.index[:50], "safety"] = np.nan
    [d] = decide(
        base,
        {"gappy": cand},
        target_metric="utility",
        target_direction="increase",
        guardrails=GUARD,
    )
    assert d.verdict == "regression"
    assert any("safety floor breached" in r for r in d.reasons)


def test_missing_target_scores_are_not_computable_never_promoted() -> None:
    # A clearly better candidate with 3 missing target scores: a mean over what is left could
    # promote it; the verdict names the gap instead (no statistic raises, nothing is promoted).
    rng = np.random.default_rng(0)
    base = _frame(100, rng)
    cand = base.copy()
    cand["economics"] = base["economics"] - 0.05
    cand.loc[cand.index[:3], "economics"] = np.nan
    [d] = decide(
        base,
        {"gappy": cand},
        target_metric="economics",
        target_direction="decrease",
        guardrails=GUARD,
    )
    assert d.verdict == "underpowered"
    assert d.reasons == (
        "not computable: gappy has 3 missing or non-finite economics score(s); re-run those cases",
    )


def test_significant_worsening_is_said_so() -> None:
    rng = np.random.default_rng(0)
    base = _frame(500, rng)
    cand = base.copy()
    cand["economics"] = base["economics"] + 0.01
    [d] = decide(
        base,
        {"pricier": cand},
        target_metric="economics",
        target_direction="decrease",
        guardrails=GUARD,
    )
    assert d.verdict == "no_effect" and "worsens significantly" in d.reasons[0]


def test_null_calibration_cheap_continuous_target() -> None:
    """The continuous (paired t) path under label shuffling, on a cost target."""
    result = simulate_null(
        design="shuffled", runs=200, n_cases=120, seed=12, n_boot=50, target_metric="economics"
    )
    assert result.runs == 200
    assert result.promote_rate <= 0.05, result


def test_the_utility_guardrail_checks_the_utility_the_proposal_reports() -> None:
    """Partial credit: the mean drops by 0.03 (allowed 0.01) while the share of fully correct
    cases does not move. The breach, the gate table and the proposal all name `utility`, the
    evaluator's mean; `utility_correct` is reported beside it, never checked."""
    rng = np.random.default_rng(4)
    base = _frame(400, rng)
    base["utility"] = np.where(base["utility"] == 1.0, 1.0, 0.5)
    cand = base.copy()
    cand["economics"] -= 0.02
    half = cand.index[cand["utility"] == 0.5][:60]
    cand.loc[half, "utility"] = 0.3  # partial credit lost, no fully-correct case changes
    [d] = decide(
        base, {"c": cand}, target_metric="economics", target_direction="decrease", guardrails=GUARD
    )
    utility = d.test_for("utility")
    assert utility.outcome == "continuous"
    assert utility.delta == pytest.approx(cand["utility"].mean() - base["utility"].mean())
    assert d.test_for("utility_correct").delta == 0.0
    assert d.verdict == "regression"
    assert any(r.startswith("utility accepted delta breached") for r in d.reasons)
    assert f"{-utility.delta:.4g}" in " ".join(d.reasons)
    # all-binary scores: `utility` is the share correct, tested exactly; no duplicate view
    [b] = decide(
        _frame(200, rng), {"c": _frame(200, rng)}, target_metric="utility",
        target_direction="increase", guardrails=GUARD,
    )  # fmt: skip
    assert b.test_for("utility").outcome == "binary"
    assert "utility_correct" not in {t.metric for t in b.tests}
