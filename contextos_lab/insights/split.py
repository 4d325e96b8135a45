"""A declared search/held-out split of traces, by a stable hash of the trace id.

Patterns are discovered on the search split only; the held-out split is left for the gate to
confirm them. The split is a pure function of (trace id, salt, fraction), so the gate can
recompute it anywhere without a stored list, and adding traces never moves existing ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

SEARCH = "search"
HELDOUT = "heldout"


@dataclass(frozen=True)
class SplitSpec:
    heldout_fraction: float = 0.3
    salt: str = "contextos-split-v1"

    def __post_init__(self) -> None:
        if not 0.0 <= self.heldout_fraction < 1.0:
            raise ValueError("heldout_fraction must be in [0, 1)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def unit(self, trace_id: str) -> float:
        """Uniform in [0, 1) from the first 8 bytes of sha256(salt:trace_id)."""
        digest = hashlib.sha256(f"{self.salt}:{trace_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def of(self, trace_id: str) -> str:
        return HELDOUT if self.unit(trace_id) < self.heldout_fraction else SEARCH

    def assign(self, trace_ids: Iterable[str]) -> pd.Series:
        ids = list(trace_ids)
        units = np.fromiter((self.unit(t) for t in ids), dtype=float, count=len(ids))
        return pd.Series(
            np.where(units < self.heldout_fraction, HELDOUT, SEARCH), index=ids, dtype="string"
        )
