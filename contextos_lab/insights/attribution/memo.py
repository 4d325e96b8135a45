"""The last run's signals and step features, remembered: each is asked for twice in a row.

The attributor reads a run's `run_signals` and `step_features`, then the row that describes the
decisive step (`runs.trace_attribution`, `runs.act_of`) reads the same again; on a corpus that
second pass was about 40 % of the time spent per trace. Only the last run is kept (held, so its
identity cannot be reused by another object), a hit needs the same run object and equal other
arguments, and every caller gets its own copy, so nothing a caller does can leak to another.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

R = TypeVar("R")


def last_run(
    duplicate: Callable[[Any], Any] = copy.deepcopy,
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate `fn(run, *args, **kwargs)`: answered from the previous call for this run
    (`duplicate` copies the result, so a caller's edits never reach the memo)."""

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        last: list[Any] = [None, None, None]  # run, (args, kwargs), result

        @functools.wraps(fn)
        def wrapper(run: Any, *args: Any, **kwargs: Any) -> R:
            key = (args, kwargs)
            if run is last[0] and key == last[1]:
                return cast(R, duplicate(last[2]))
            result = fn(run, *args, **kwargs)
            last[:] = [run, key, result]
            return cast(R, duplicate(result))

        return wrapper

    return decorate


def rows_copy(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of feature rows (flat dicts of numbers)."""
    return [dict(row) for row in rows]


__all__ = ["last_run", "rows_copy"]
