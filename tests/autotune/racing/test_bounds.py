"""Paired racing bounds: hold the full-set mean, close at the full set, never claim certainty
from a prefix that happens to agree, and are tighter than unpaired bounds when configs agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.autotune.racing.bounds import estimate, paired


def _population(seed: int, n_total: int, flip: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A reference and a candidate that differs from it on a `flip` share of the cases."""
    rng = np.random.default_rng(seed)
    ref_u = rng.choice([0.0, 0.5, 1.0], size=n_total, p=[0.1, 0.3, 0.6])
    ref_lat = rng.gamma(4.0, 200.0, size=n_total)
    differs = rng.random(n_total) < flip
    cand_u = np.where(differs, rng.choice([0.0, 0.5, 1.0], size=n_total), ref_u)
    cand_lat = ref_lat + np.where(differs, rng.normal(30.0, 40.0, size=n_total), 0.0)
    ref = pd.DataFrame({"utility": ref_u, "latency": ref_lat})
    cand = pd.DataFrame({"utility": cand_u, "latency": cand_lat})
    return ref, cand


def _paired_at(ref: pd.DataFrame, cand: pd.DataFrame, order: np.ndarray, n: int, z: float):
    prefix = {c: ref[c].to_numpy()[order] for c in ref.columns}
    means = {c: float(ref[c].mean()) for c in ref.columns}
    return paired(cand.iloc[order[:n]].reset_index(drop=True), prefix, means, len(ref), z)


def test_paired_bounds_cover_the_full_set_mean() -> None:
    ref, cand = _population(seed=1, n_total=600, flip=0.15)
    truth = cand.mean()
    rng = np.random.default_rng(7)
    misses = 0
    for _ in range(300):
        est = _paired_at(ref, cand, rng.permutation(600), n=60, z=3.0)
        misses += any(not est.low[c] <= truth[c] <= est.high[c] for c in cand.columns)
    assert misses <= 6  # z = 3 on two scores: ~0.5 % expected, 2 % allowed


def test_paired_bounds_are_tighter_than_unpaired_when_configs_agree() -> None:
    ref, cand = _population(seed=2, n_total=684, flip=0.1)
    order = np.random.default_rng(3).permutation(684)
    for n in (34, 137, 274):
        p = _paired_at(ref, cand, order, n=n, z=2.0)
        u = estimate(cand.iloc[order[:n]], 684, z=2.0)
        for c in cand.columns:
            width, unpaired = p.high[c] - p.low[c], u.high[c] - u.low[c]
            # at 34 cases the guard (one unseen full-range difference) is most of the width
            assert width < (0.8 if n == 34 else 0.6) * unpaired, (n, c, width, unpaired)


def test_a_prefix_that_agrees_on_every_case_leaves_room_for_the_rest() -> None:
    ref, _ = _population(seed=4, n_total=500, flip=0.0)
    order = np.arange(500)
    same = ref.copy()
    est = _paired_at(ref, same, order, n=200, z=2.0)
    for c in ref.columns:
        assert est.low[c] < ref[c].mean() < est.high[c]  # not certainty from 200 ties
    exact = _paired_at(ref, same, order, n=500, z=2.0)
    assert exact.low == exact.high == {c: float(ref[c].mean()) for c in ref.columns}


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 300),
    flip=st.floats(0.0, 1.0),
    z=st.floats(0.5, 4.0),
)
def test_paired_bounds_are_ordered_and_within_what_unseen_cases_allow(
    seed: int, n: int, flip: float, z: float
) -> None:
    ref, cand = _population(seed=seed, n_total=300, flip=flip)
    est = _paired_at(ref, cand, np.random.default_rng(seed).permutation(300), n=n, z=z)
    for c in cand.columns:
        assert est.low[c] <= est.high[c]
    # utility is bounded to [0, 1]: the full mean can never leave it, nor what the seen
    # cases already fix
    assert 0.0 <= est.low["utility"] <= est.high["utility"] <= 1.0
    if n == 300:
        assert est.low == est.high
