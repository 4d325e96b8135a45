"""Tier agreement (issue 46): rank correlation with an interval, the weakest objective wins."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.autotune.spec.tiers import Tiers
from contextos_lab.autotune.tiers.agreement import measure, rank_correlation
from contextos_lab.autotune.tiers.screen import stance

TIERS = Tiers(screen={"harness_kwargs": {"x": 1}}, min_pairs=10, min_agreement=0.2)


def test_same_ranking_is_one_reversed_is_minus_one() -> None:
    x = np.arange(20, dtype=float)
    rho, _, _ = rank_correlation(x, x**2, 0.9)  # type: ignore[misc]
    assert abs(rho - 1.0) < 1e-12
    rho, _, high = rank_correlation(x, -x, 0.9)  # type: ignore[misc]
    assert abs(rho + 1.0) < 1e-12 and high < 0


def test_constant_or_too_few_is_not_measured() -> None:
    assert rank_correlation(np.ones(10), np.arange(10.0), 0.9) is None
    assert rank_correlation(np.arange(3.0), np.arange(3.0), 0.9) is None


def test_the_objective_with_the_smallest_lower_bound_is_the_agreement() -> None:
    rng = np.random.default_rng(0)
    n = 40
    target = rng.normal(size=(n, 2))
    screen = np.column_stack([target[:, 0], rng.normal(size=n)])  # agrees on a, not on b
    got = measure(screen, target, ["a", "b"], 0.9)
    assert got.objective == "b" and got.n == n
    assert got.per_objective["a"][0] == 1.0
    assert got.low is not None and got.low < 0.3


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), min_size=4, max_size=40))
def test_interval_holds_the_estimate(rows: list[tuple[float, float]]) -> None:
    x, y = np.array(rows).T
    got = rank_correlation(x, y, 0.9)
    if got is not None:
        rho, low, high = got
        assert -1.0 - 1e-9 <= low <= rho + 1e-9 and rho - 1e-9 <= high <= 1.0 + 1e-9


def test_stances() -> None:
    few = measure(np.arange(5.0)[:, None], np.arange(5.0)[:, None], ["a"], 0.9)
    assert stance(few, TIERS)[0] == "learning"
    x = np.arange(30.0)
    assert stance(measure(x[:, None], x[:, None], ["a"], 0.9), TIERS)[0] == "trusted"
    assert stance(measure(x[:, None], -x[:, None], ["a"], 0.9), TIERS)[0] == "off"
    rng = np.random.default_rng(3)
    noise = measure(rng.normal(size=(12, 1)), rng.normal(size=(12, 1)), ["a"], 0.9)
    assert stance(noise, TIERS)[0] == "learning"  # too few to call it off, nothing earned
