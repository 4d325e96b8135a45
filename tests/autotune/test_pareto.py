"""Hypervolume against hand-computed values, dominance, and the seed's candidate ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contextos_lab.autotune.pareto import (
    hypervolume,
    non_dominated,
    normalised_losses,
    rank_candidates,
)
from contextos_lab.autotune.spec.load import parse_spec
from tests.autotune.conftest import toy_spec_dict


def test_hypervolume_2d_hand_computed() -> None:
    # boxes [0.2,1]x[0.6,1] (0.32) and [0.5,1]x[0.3,1] (0.35) overlap on [0.5,1]x[0.6,1] (0.2)
    pts = np.array([[0.2, 0.6], [0.5, 0.3]])
    assert hypervolume(pts) == pytest.approx(0.47)
    # a dominated point and a point outside the reference box change nothing
    more = np.vstack([pts, [[0.6, 0.7], [1.5, 0.0]]])
    assert hypervolume(more) == pytest.approx(0.47)


def test_hypervolume_3d_hand_computed() -> None:
    # 0.5^3 + 0.75*0.25*0.25 - 0.5*0.25*0.25 = 0.140625
    pts = np.array([[0.5, 0.5, 0.5], [0.25, 0.75, 0.75]])
    assert hypervolume(pts) == pytest.approx(0.140625)
    assert hypervolume(np.empty((0, 3))) == 0.0


def test_normalisation_maps_ideal_to_0_and_reference_to_1(case_dir: Path) -> None:
    spec = parse_spec(toy_spec_dict(), case_dir)  # ideal (1, 0, 0), reference (0, 300, 4)
    frame = pd.DataFrame({"utility": [1.0, 0.0, 0.5], "latency": [0, 300, 150],
                          "economics": [0, 4, 1]})  # fmt: skip
    np.testing.assert_allclose(
        normalised_losses(frame, spec), [[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.25]]
    )


def test_non_dominated_keeps_ties() -> None:
    losses = np.array([[0.1, 0.9], [0.5, 0.5], [0.5, 0.5], [0.6, 0.6], [0.9, 0.1]])
    assert non_dominated(losses).tolist() == [True, True, True, False, True]


def test_ranking_prefers_additive_and_smaller_diffs_at_equal_gain(case_dir: Path) -> None:
    spec = parse_spec(toy_spec_dict(gain_tolerance=0.01), case_dir)
    baseline = {"policy": 1.0, "safety": 1.0, "utility": 0.5, "latency": 200.0, "economics": 2.0}
    base_row = {"policy": 1.0, "safety": 1.0, "utility": 0.5, "latency": 200.0, "layers": []}
    front = pd.DataFrame(
        [
            # same gain (-0.5 cents): control-flow, two knobs
            {**base_row, "number": 1, "economics": 1.5, "n_control_flow": 1, "n_changed": 2,
             "n_additive": 1, "diff_size": 2.0},
            # same gain within tolerance: additive, one knob, big move
            {**base_row, "number": 2, "economics": 1.502, "n_control_flow": 0, "n_changed": 1,
             "n_additive": 1, "diff_size": 3.0},
            # same gain: additive, one knob, small move -> best
            {**base_row, "number": 3, "economics": 1.5, "n_control_flow": 0, "n_changed": 1,
             "n_additive": 1, "diff_size": 1.0},
            # larger gain wins outright even though it is control-flow
            {**base_row, "number": 4, "economics": 1.0, "n_control_flow": 2, "n_changed": 2,
             "n_additive": 0, "diff_size": 4.0},
        ]
    )  # fmt: skip
    ranked = rank_candidates(front, spec, baseline)
    assert ranked["number"].tolist() == [4, 3, 2, 1]
    assert ranked["rank"].tolist() == [1, 2, 3, 4]
    assert ranked.loc[0, "target_gain"] == pytest.approx(1.0)  # economics fell by 1 cent
