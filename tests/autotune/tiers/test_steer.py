"""The screen's promotion rule (issue 46) on a fake screen/target pair: with the tiers ranking
alike only configs no target front member beats on the screen go on; with no agreement, all."""

from __future__ import annotations

import numpy as np

from contextos_lab.autotune.pareto import non_dominated
from contextos_lab.autotune.tiers.agreement import measure
from contextos_lab.autotune.tiers.steer import beaten_by, margins, per_objective_lows

OBJECTIVES = ["accuracy_loss", "cost"]
RNG = np.random.default_rng(46)
#: 40 configs' target losses on two objectives that trade off (a fake target tier)
TARGET = np.column_stack([RNG.uniform(0, 1, 40), RNG.uniform(0, 1, 40)])
TARGET[:, 1] += 1.0 - TARGET[:, 0]


def promoted(screen: np.ndarray) -> list[int]:
    """Of configs 30..39, those the rule sends to the target, trust measured on configs 0..29
    (run on both) and the target front taken from those."""
    agreement = measure(screen[:30], TARGET[:30], OBJECTIVES, 0.9)
    lows = per_objective_lows(agreement.per_objective, OBJECTIVES)
    front = list(np.flatnonzero(non_dominated(TARGET[:30])))
    out = []
    for mine in range(30, 40):
        rows = np.vstack([screen[:30], screen[mine]])  # every screened config, this one last
        if beaten_by(rows, 30, front, lows) is None:
            out.append(mine)
    return out


def test_full_agreement_promotes_only_configs_no_front_member_beats() -> None:
    screen = TARGET * 0.1 + 3.0  # another scale, the same ranking
    got = promoted(screen)
    front = TARGET[:30][non_dominated(TARGET[:30])]
    expected = [
        i for i in range(30, 40)
        if not any(np.all(f < TARGET[i]) for f in front)
    ]  # fmt: skip
    assert got == expected and 0 < len(got) < 10


def test_no_agreement_promotes_everything() -> None:
    unrelated = RNG.uniform(0, 1, size=(40, 2))
    assert promoted(unrelated) == list(range(30, 40))
    reversed_ = -TARGET  # ranks every config the other way round
    assert promoted(reversed_) == list(range(30, 40))


def test_margins_follow_the_lower_bound() -> None:
    assert list(margins([1.0, 0.6, 0.0, -0.5, None])) == [0.0, 0.2, 1.0, 1.0, 1.0]
