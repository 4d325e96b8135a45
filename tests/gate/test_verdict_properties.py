"""No statistic raises: `decide` returns a verdict with reasons for every degenerate input."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.gate.paired_tests import required_sample_size, sample_size
from contextos_lab.gate.verdict import EVALUATORS, GateGuardrails, decide

GUARD = GateGuardrails(
    policy_floor=0.9,
    safety_floor=0.9,
    accepted_delta={"utility": 0.05, "latency": 50.0, "economics": 0.05},
)
VERDICTS = {"promote", "underpowered", "regression", "no_effect"}

#: Per-case values: ordinary, huge, tiny, and the non-finite ones a broken evaluator returns.
SCORES = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    st.sampled_from([1e300, -1e300, 1.7e308, 5e-324, np.nan, np.inf, -np.inf]),
)


@st.composite
def shaped(draw: st.DrawFn, n: int) -> np.ndarray:
    """One metric's per-case column in one degenerate shape."""
    shape = draw(
        st.sampled_from(["constant", "binary", "free", "with_bad", "huge_shift", "two_values"])
    )
    if shape == "constant":
        return np.full(n, draw(SCORES))
    if shape == "binary":
        return np.asarray(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    if shape == "two_values":
        a, b = draw(SCORES), draw(SCORES)
        return np.asarray([a if i % 2 else b for i in range(n)], dtype=float)
    values = np.asarray(draw(st.lists(SCORES, min_size=n, max_size=n)), dtype=float)
    if shape == "huge_shift":
        return values + draw(st.sampled_from([1e12, -1e12, 1e300]))
    return values


@st.composite
def frames(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    n = draw(st.sampled_from([0, 1, 2, 3, 5, 30]))
    index = pd.Index([f"c{i}" for i in range(n)], name="case_id")
    base = pd.DataFrame({m: draw(shaped(n)) for m in EVALUATORS}, index=index)
    candidates = {}
    for k in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["copy", "ties", "fresh", "shift_target"]))
        cand = base.copy()
        if how == "fresh":
            cand = pd.DataFrame({m: draw(shaped(n)) for m in EVALUATORS}, index=index)
        elif how == "shift_target":
            cand["utility"] = cand["utility"] + draw(st.sampled_from([1e-12, 0.5, 1e6, 1e308]))
        candidates[f"cand{k}"] = cand
    return base, candidates


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=frames(),
    target=st.sampled_from(["utility", "latency", "economics", "policy"]),
    alpha=st.sampled_from([0.05, 1e-9, 0.5]),
)
def test_decide_returns_a_verdict_for_every_degenerate_input(
    data: tuple[pd.DataFrame, dict[str, pd.DataFrame]], target: str, alpha: float
) -> None:
    base, candidates = data
    direction = "decrease" if target in ("latency", "economics") else "increase"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a statistic that only warns its way through fails too
        decisions = decide(
            base,
            candidates,
            target_metric=target,
            target_direction=direction,
            guardrails=GUARD,
            alpha=alpha,
            n_boot=50,
        )
    assert [d.candidate_id for d in decisions] == list(candidates)
    for d in decisions:
        assert d.verdict in VERDICTS and d.reasons and all(d.reasons)
        assert 0.0 <= d.target_p_value <= 1.0 and 0.0 <= d.target_p_adjusted <= 1.0
        if d.verdict == "promote":
            # Only finite, complete evidence promotes; policy may be missing on both sides of
            # a case (not scored: an intent without a rule), which the notes then say.
            cols = [base[m].to_numpy(float) for m in EVALUATORS if m != "policy"] + [
                candidates[d.candidate_id][m].to_numpy(float)
                for m in ("utility", "latency", "economics")
            ]
            assert all(np.isfinite(c).all() for c in cols)
            b = base["policy"].to_numpy(float)
            c = candidates[d.candidate_id]["policy"].reindex(base.index).to_numpy(float)
            unscored = np.isnan(b) & np.isnan(c)
            assert np.isfinite(b[~unscored]).all() and np.isfinite(c[~unscored]).all()
            assert unscored.any() == any(n.startswith("policy not scored") for n in d.notes)
        if d.verdict == "underpowered" and d.required_n is None:
            assert any("not computable" in r for r in d.reasons)


def test_non_finite_scores_name_what_cannot_be_computed() -> None:
    n = 40
    rng = np.random.default_rng(0)
    base = pd.DataFrame(
        {m: rng.random(n) for m in EVALUATORS} | {"policy": np.ones(n), "safety": np.ones(n)},
        index=pd.Index([f"c{i}" for i in range(n)], name="case_id"),
    )
    cand = base.copy()
    cand["utility"] = 1.0
    cand.loc[cand.index[:2], "latency"] = np.inf
    [d] = decide(
        base, {"x": cand}, target_metric="utility", target_direction="increase", guardrails=GUARD
    )
    assert d.verdict == "underpowered"
    assert d.reasons[0].startswith("not computable: x has 2 missing or non-finite latency")


def test_sample_size_never_raises_where_solve_power_does_not_converge() -> None:
    # statsmodels' solve_power returns NaN with a ConvergenceWarning for a huge effect (here
    # 100 sd); the gate died on int(nan).
    diff = np.asarray([1.0, 1.01, 0.99])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n, how = sample_size(diff, alpha=0.05)
    assert n == 2 and "normal approximation" in how
    for degenerate in ([], [1.0], [2.0, 2.0], [np.nan, 1.0], [1e308, -1e308], [0.0, 0.0]):
        n, how = sample_size(np.asarray(degenerate, dtype=float))
        assert n is None and how.startswith("not computable")
    huge = np.asarray([1e300, 2e300, 3e300])
    assert required_sample_size(huge) is not None and required_sample_size(huge) >= 2


def test_decide_sizes_a_huge_effect_it_cannot_confirm_instead_of_crashing() -> None:
    """The slow_harness A/A crash: an underpowered target whose effect is so large that
    solve_power does not converge (NaN) used to raise out of decide via int(nan)."""
    index = pd.Index(["c0", "c1", "c2"], name="case_id")
    base = pd.DataFrame(
        {"policy": 1.0, "safety": 1.0, "utility": 0.2, "latency": 100.0, "economics": 0.1},
        index=index,
    )
    cand = base.assign(utility=[0.7, 0.71, 0.69])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [d] = decide(
            base,
            {"big": cand},
            target_metric="utility",
            target_direction="increase",
            guardrails=GUARD,
            alpha=1e-6,
            n_boot=50,
        )
    assert d.verdict == "underpowered" and d.required_n is not None and d.required_n >= 2
    assert "normal approximation" in d.reasons[0]
