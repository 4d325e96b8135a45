"""What the front local search reads from finished trials, worked out once per trial.

Why: the local search ran over every trial on every call (config keys, string-coded knob
values, outcomes, the feasible front, the front's hypervolume shares), so its own time grew
with the study and pushed the default sampler over 5 % of a stand-in trial's wall (issue 33).
A finished trial's params, values, constraints and state never change, so each is encoded
once; the front is kept incrementally (strict Pareto dominance is a strict partial order, so
front(A + B) == front(front(A) + B)); hypervolume shares are memoised on the front's values.
Nothing here decides anything: the sampler's proposals are bit-identical to recomputing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial


@dataclass(frozen=True)
class Row:
    """One finished trial: its config key, per-knob value codes (None unless it set every
    knob) and its outcome code."""

    key: tuple[Any, ...]
    codes: tuple[int, ...] | None
    outcome: int


@dataclass
class TrialRows:
    """Per-study, per-knob-set cache of finished trials' rows (reset when either changes)."""

    key_of: Callable[[dict[str, Any], Sequence[str]], tuple[Any, ...]]
    outcome_of: Callable[[FrozenTrial], tuple[Any, ...]]
    scope: tuple[Any, ...] = ()
    rows: dict[int, Row] = field(default_factory=dict)
    tried: set[tuple[Any, ...]] = field(default_factory=set)
    strs: list[list[str]] = field(default_factory=list)  # code -> str value, per knob
    codes: list[dict[str, int]] = field(default_factory=list)  # str value -> code, per knob
    outcomes: dict[tuple[Any, ...], int] = field(default_factory=dict)
    front_seen: set[int] = field(default_factory=set)
    front: set[int] = field(default_factory=set)
    share_memo: tuple[Any, np.ndarray] | None = None

    def sync(self, study: Study, names: list[str], finished: Sequence[FrozenTrial]) -> None:
        """Encode finished trials not yet seen (all of them after a change of study/knobs)."""
        scope = (id(study._storage), study._study_id, tuple(names))
        if scope != self.scope:
            self.scope = scope
            self.rows, self.tried, self.outcomes = {}, set(), {}
            self.strs, self.codes = [[] for _ in names], [{} for _ in names]
            self.front_seen, self.front, self.share_memo = set(), set(), None
        full = set(names)
        for t in finished:
            if t.number in self.rows:
                continue
            key = self.key_of(t.params, names)
            codes = None
            if set(t.params) == full:
                codes = tuple(self._code(k, str(self.key_of(t.params, [n])[0]))
                              for k, n in enumerate(names))  # fmt: skip
            outcome = self.outcomes.setdefault(self.outcome_of(t), len(self.outcomes))
            self.rows[t.number] = Row(key, codes, outcome)
            self.tried.add(key)

    def _code(self, k: int, value: str) -> int:
        got = self.codes[k].get(value)
        if got is None:
            got = self.codes[k][value] = len(self.strs[k])
            self.strs[k].append(value)
        return got

    def front_of(
        self,
        finished: Sequence[FrozenTrial],
        front: Callable[[Sequence[FrozenTrial]], list[FrozenTrial]],
    ) -> list[FrozenTrial]:
        """`front(finished)`, computed over the last front and the newly finished only (same
        members, same order: the order of `finished`)."""
        pool = [t for t in finished if t.number in self.front or t.number not in self.front_seen]
        kept = front(pool)
        self.front = {t.number for t in kept}
        self.front_seen.update(t.number for t in finished)
        return kept

    def shares(self, key: Any, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """`compute()`, memoised on `key` (the front's values; they rarely change)."""
        if self.share_memo is None or self.share_memo[0] != key:
            self.share_memo = (key, compute())
        return self.share_memo[1]
