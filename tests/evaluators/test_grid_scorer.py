"""The reference harness's frame-free scorer equals the full path (run_batch + evaluate)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pandas as pd
import pytest

from contextos_lab.evaluators.scorecard import evaluate
from contextos_lab.harness.protocol import baseline_config
from contextos_lab.harness.reference import SupportDeskHarness
from contextos_lab.harness.reference.scoring import EVALUATOR_ORDER, GridScorer


def _configs(harness: SupportDeskHarness, n: int, seed: int) -> list[dict[str, Any]]:
    surfaces = harness.tunable_surfaces()
    rng = random.Random(seed)
    out = [baseline_config(harness)]
    # every single-knob change from the baseline, then random points of the whole grid
    for s in surfaces:
        for v in s.grid():
            if v != s.baseline:
                out.append({**baseline_config(harness), s.name: v})
    out += [{s.name: rng.choice(s.grid()) for s in surfaces} for _ in range(n)]
    return out


@pytest.fixture(scope="module")
def scorer(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> GridScorer:
    return GridScorer(harness, search_cases)


def test_per_case_scores_and_means_equal_the_frame_path(
    harness: SupportDeskHarness, search_cases: pd.DataFrame, scorer: GridScorer
) -> None:
    for config in _configs(harness, 40, seed=7):
        frame = evaluate(search_cases, harness.run_batch(search_cases, config))
        fast = scorer.per_case(config)
        assert list(fast) == list(EVALUATOR_ORDER)
        for name, values in fast.items():
            np.testing.assert_array_equal(values, frame[name].to_numpy(dtype=float), name)
        # bit-identical means, as autotune.objective.score_config computes them
        means = {e: float(frame[e].astype(float).mean()) for e in EVALUATOR_ORDER}
        assert scorer.scores(config) == means


def test_equal_on_subsets_and_shuffled_cases(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    subset = search_cases.sample(300, random_state=3).reset_index(drop=True)
    scorer = GridScorer(harness, subset)
    for config in _configs(harness, 10, seed=11)[::3]:
        frame = evaluate(subset, harness.run_batch(subset, config))
        assert scorer.scores(config) == {
            e: float(frame[e].astype(float).mean()) for e in EVALUATOR_ORDER
        }


def test_covers_the_branches_it_shortcuts(
    harness: SupportDeskHarness, search_cases: pd.DataFrame, scorer: GridScorer
) -> None:
    """The sampled configs reach leaks, obeyed injections, violations and partial credit, so
    the equality above is not vacuous."""
    seen = {"policy0": False, "safety0": False, "utility_half": False, "utility0": False}
    for config in itertools.islice(_configs(harness, 40, seed=7), None):
        s = scorer.per_case(config)
        seen["policy0"] |= bool((s["policy"] == 0).any())
        seen["safety0"] |= bool((s["safety"] == 0).any())
        seen["utility_half"] |= bool((s["utility"] == 0.5).any())
        seen["utility0"] |= bool((s["utility"] == 0).any())
    assert all(seen.values()), seen
    assert scorer.can_obey.any() and scorer.leaks.any() and scorer.bad_if_approved.any()


def test_an_intent_without_a_rule_is_unscored_on_both_paths(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    """Drop the bundled project's `order_status` rule: both paths leave those cases unscored
    (NaN, not 1.0) and average policy over the others, bit for bit."""
    from contextos_lab.domain import use_project
    from contextos_lab.domain.active import active_project

    bundled = active_project()
    rules = {k: v for k, v in bundled.policy_evaluation.items() if k != "order_status"}
    previous = use_project(bundled.model_copy(update={"policy_evaluation": rules}))
    try:
        scorer = GridScorer(harness, search_cases)
        unruled = (search_cases["intent"] == "order_status").to_numpy()
        for config in _configs(harness, 6, seed=5)[::4]:
            frame = evaluate(search_cases, harness.run_batch(search_cases, config))
            fast = scorer.per_case(config)["policy"]
            np.testing.assert_array_equal(fast, frame["policy"].to_numpy(dtype=float))
            assert np.isnan(fast[unruled]).all() and not np.isnan(fast[~unruled]).any()
            assert scorer.scores(config)["policy"] == float(frame["policy"].mean())
    finally:
        use_project(previous)
