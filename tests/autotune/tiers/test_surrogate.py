"""The surrogate (issue 46): the target predicted from the screen plus a correction learned on
configs run on both tiers, so a knob whose best value flips between tiers is learned, not
assumed away; and the pick is the config adding most to the target front."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from contextos_lab.autotune.spec.search_space import SearchSpace
from contextos_lab.autotune.tiers.pool import draw, key
from contextos_lab.autotune.tiers.surrogate import Surrogate, best_pick, config_columns
from contextos_lab.schemas.surface import TunableSurface

# fmt: off
SPACE = SearchSpace(
    surfaces=(
        TunableSurface(name="size", layer="prompt", kind="categorical", choices=("s", "l"),
                       baseline="s", change_class="additive"),
        TunableSurface(name="x", layer="prompt", kind="float", low=0.0, high=1.0, step=0.1,
                       baseline=0.0, change_class="additive"),
    ),
    base_config={},
)
# fmt: on


def tiers(params: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """A screen and a target that agree on `x` and disagree on `size`: `l` is worse on the
    screen by 0.3 and better on the target by 0.3 (one objective, as a loss)."""
    x = np.array([p["x"] for p in params])
    large = np.array([p["size"] == "l" for p in params], dtype=float)
    return (x + 0.3 * large).reshape(-1, 1), (x + 0.3 * (1 - large)).reshape(-1, 1)


def test_the_correction_learns_a_knob_whose_best_value_flips_between_tiers() -> None:
    pairs = [{"size": s, "x": x} for s, x in itertools.product("sl", (0.0, 0.2, 0.5, 0.7, 1.0))]
    screen, target = tiers(pairs)
    model = Surrogate.fit(SPACE, pairs, screen, target)
    new = [{"size": "s", "x": 0.4}, {"size": "l", "x": 0.4}]
    new_screen, new_target = tiers(new)
    assert new_screen[1, 0] > new_screen[0, 0]  # the screen prefers the small size ...
    mean, spread = model.predict(new, new_screen)
    assert mean[1, 0] < mean[0, 0]  # ... the surrogate learned the target prefers the large one
    assert np.allclose(mean, new_target, atol=0.05) and np.all(spread > 0)


def test_config_columns_one_hot_a_category_and_scale_a_number() -> None:
    got = config_columns(SPACE, [{"size": "l", "x": 0.5}])
    assert got.tolist() == [[0.0, 1.0, 0.5, 0.25]]


def test_the_pick_adds_most_to_the_front_and_nothing_dominated_is_picked() -> None:
    front = np.array([[0.2, 0.8], [0.8, 0.2]])
    mean = np.array([[0.9, 0.9], [0.5, 0.5], [0.1, 0.85]])
    zero = np.zeros_like(mean)
    got = best_pick(front, mean, zero, optimism=1.0)
    assert got is not None and got[0] == 1 and got[1] > 0
    assert best_pick(front, mean[:1], zero[:1], optimism=1.0) is None
    # an uncertain candidate is worth a look when optimism is allowed, not without it
    assert best_pick(front, mean[:1], np.full((1, 2), 0.5), optimism=1.0) is not None
    assert best_pick(front, mean[:1], np.full((1, 2), 0.5), optimism=0.0) is None


def test_draw_takes_distinct_unseen_configs_and_the_whole_grid_when_small() -> None:
    seen = {key({"size": "s", "x": 0.0})}
    got = draw(SPACE, 5, seen, seed=3)
    assert len(got) == 5 and len({key(p) for p in got}) == 5 and not {key(p) for p in got} & seen
    assert got == draw(SPACE, 5, seen, seed=3)  # deterministic per seed
    everything = draw(SPACE, 100, seen, seed=3)
    assert len(everything) == SPACE.size() - 1
