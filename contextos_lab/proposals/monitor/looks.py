"""The window's calendar looks: which day boundaries have passed, the scorecards each day
holds, and the looks already recorded in the store (their boundaries are frozen there).

A look is a day boundary of the window's own calendar (opened_at + j days), not a call: the
monitor called hourly, daily or after every scorecard reaches the same looks, so repeated calls
add no looks (issue 42). Without a MonitorWindow (a caller handing two slices) the slices are
one look.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from contextos_lab.schemas.monitoring import MonitorLook, MonitorVerdict
from contextos_lab.schemas.review import MonitorWindow
from contextos_lab.schemas.scorecard import Scorecard

DAY = timedelta(days=1)


def window_days(window: MonitorWindow) -> int:
    return max(1, math.ceil((window.closes_at - window.opened_at) / DAY))


def completed_days(window: MonitorWindow, at: datetime) -> int:
    """Day boundaries passed by `at` (a day is looked at once it has ended)."""
    return max(0, min(window_days(window), math.floor((at - window.opened_at) / DAY)))


def by_day(
    window: MonitorWindow | None, cards: Sequence[Scorecard], done: int
) -> list[list[Scorecard]]:
    """Cards of each completed day 1..done (the last day keeps a card at exactly closes_at)."""
    if window is None:
        return [list(cards)]
    days: list[list[Scorecard]] = [[] for _ in range(done)]
    last = window_days(window)
    for card in cards:
        j = min(last, math.floor((card.computed_at - window.opened_at) / DAY) + 1)
        if 1 <= j <= done:
            days[j - 1].append(card)
    return days


def recorded(store: Any, window_id: str | None) -> tuple[MonitorVerdict | None, list[MonitorLook]]:
    """The window's latest stored verdict and its looks (the frozen record)."""
    if store is None or window_id is None:
        return None, []
    mine = [v for v in store.list(MonitorVerdict) if v.window_id == window_id]
    if not mine:
        return None, []
    last = max(mine, key=lambda v: (len(v.looks), v.n_window, v.decided_at))
    return last, list(last.looks)
