"""Equal values of a column held once: a corpus repeats its decision keys, statuses, tool paths
and attributed roles run after run, and every value unpickled from a worker is a fresh object.

`cluster` keeps a few columns per run for the analysis (`insights.run_rows`,
`insights.attribution.spilled`); holding each repeated value once makes a run cost a pointer
per column instead of a string or tuple of its own. A column whose values never repeat (ids)
fills the table up to `limit` and is then passed through, so the table itself stays bounded.
"""

from __future__ import annotations

from typing import Any

#: Distinct values remembered per column; past it new values are kept as they come.
LIMIT = 4096


class Interner:
    """`intern(value)`: an equal value seen before (same type: `1` never becomes `True`), or
    `value` itself. Only strings and tuples of strings are shared: they are immutable."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._seen: dict[Any, Any] = {}

    def __call__(self, value: Any) -> Any:
        if type(value) is not str and not (
            type(value) is tuple and all(type(v) is str for v in value)
        ):
            return value
        found = self._seen.get(value)
        if found is not None:
            return found
        if len(self._seen) < self.limit:
            self._seen[value] = value
        return value


__all__ = ["LIMIT", "Interner"]
