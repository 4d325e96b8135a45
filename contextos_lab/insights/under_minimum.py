"""Reason classes with corrections but no cluster: each with its counts and what would form it.

A typed cluster needs `min_cluster_size` corrections of one class on one decision key in the
search split; the rest of the corrections are held out for the gate. A class below that is
not an error, but a user who sees 4 of 14 classes cluster deserves to know why, and which
flag (a smaller minimum, a smaller held-out fraction) would include the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.schemas.feedback import FeedbackEntry


@dataclass(frozen=True)
class UnderMinimum:
    reason_class: str
    decision_key: str
    search: int
    heldout: int

    def describe(self, minimum: int) -> str:
        total = self.search + self.heldout
        flags = [f"--min-cluster-size {self.search}"] if self.search else []
        if total >= minimum:
            flags.append("--heldout-fraction 0")
        hint = " or ".join(flags) or "more corrections"
        return (
            f"{self.reason_class} on {self.decision_key}: {self.search} in search "
            f"(+{self.heldout} held out), under the minimum {minimum}; {hint} would include it"
        )


def under_minimum(
    feedback: Sequence[FeedbackEntry], split: SplitSpec, minimum: int
) -> list[UnderMinimum]:
    """(class, key) pairs with corrections whose search-split count is under `minimum`."""
    sides = split.assign(f.trace_id for f in feedback).to_numpy()
    search: Counter[tuple[str, str]] = Counter()
    held: Counter[tuple[str, str]] = Counter()
    for f, side in zip(feedback, sides, strict=True):
        key = (f.override_reason_class, f.decision_key)
        (search if side == SEARCH else held)[key] += 1
    return [
        UnderMinimum(cls, dk, search[(cls, dk)], held[(cls, dk)])
        for cls, dk in sorted(set(search) | set(held))
        if search[(cls, dk)] < minimum
    ]
