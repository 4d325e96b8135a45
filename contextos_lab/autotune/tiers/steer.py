"""Which configs the target tier pays for once the screen has earned trust: those no config on
the target's current front beats on the screen by more than the screen's measured doubt.

Racing on the target alone pays for a config until its estimates fall behind the front; most of
its calls go to configs that reach the front in the end (docs/tiers.md, "Measured"). The screen
steers before the first target call: a config whose screen scores some current front member's
screen scores beat, on every objective, by more than that objective's margin is not paid for.

Scores are compared as ranks among every screened config (a share in (0, 1] per objective, 1 the
worst), so the rule needs no scale shared by the two tiers. An objective's margin is half the
doubt its agreement interval leaves, `(1 - lower bound) / 2`: with the tiers ranking alike
(lower bound 1) any screen lead counts, with a lower bound at or below 0 no lead is enough and
every config goes on; an objective whose agreement is not measured never decides. Nothing here
knows a harness, a knob or how far two particular tiers agree: only the interval measured so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def margins(lows: Sequence[float | None]) -> np.ndarray:
    """Per objective, how far ahead on the screen (as a rank share) a front member must be to
    count: `(1 - lower bound) / 2`; a lower bound that is missing or <= 0 counts as no trust (1:
    no rank lead is larger)."""
    return np.array([1.0 if lo is None or lo <= 0 else (1.0 - lo) / 2.0 for lo in lows])


def rank_shares(losses: np.ndarray) -> np.ndarray:
    """Per column, each row's rank among the rows as a share in (0, 1] (1 the worst; ties share
    their mean rank), so scores of any scale compare."""
    from scipy.stats import rankdata

    return rankdata(losses, axis=0) / len(losses)


def beaten_by(
    screened: np.ndarray, mine: int, front: Sequence[int], lows: Sequence[float | None]
) -> int | None:
    """Row of `front` whose screen ranks beat row `mine` by more than the margin on every
    objective, or None: `screened` holds every screened config's screen losses (smaller
    better), `front` the rows of the target's current front members."""
    if not len(front):
        return None
    ranks = rank_shares(screened)
    need = margins(lows)
    ahead = np.all(ranks[list(front)] + need < ranks[mine], axis=1)
    hits = np.flatnonzero(ahead)
    return int(list(front)[hits[0]]) if len(hits) else None


def per_objective_lows(
    per_objective: Mapping[str, Sequence[float | None]], objectives: list[str]
) -> list[float | None]:
    """The agreement's lower bound per objective (`Agreement.per_objective`; None: unmeasured)."""
    return [(per_objective.get(o) or [None, None, None])[1] for o in objectives]


def lows_text(lows: Sequence[float | None]) -> str:
    """The margins as a report reads them ("-": that objective never decides)."""
    return "margins " + ", ".join("-" if m >= 1 else f"{m:.2f}" for m in margins(lows))
