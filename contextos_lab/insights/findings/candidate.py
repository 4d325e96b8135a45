"""A candidate insight: the insight and every run (or correction) it stands for."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from contextos_lab.insights.findings.families import DEFAULT_FAMILY
from contextos_lab.schemas.insight import Insight


@dataclass(frozen=True)
class Candidate:
    """An insight before the statistics layer, with every run (or correction) it stands for."""

    insight: Insight
    members: frozenset[str]

    @property
    def family(self) -> str:
        return str(self.insight.support.get("family") or DEFAULT_FAMILY)


def tested_p(support: dict[str, Any]) -> float | None:
    """The p-value of a test that actually ran against a baseline, else None."""
    p = support.get("p_value")
    test = str(support.get("test") or "")
    if p is None or test.startswith("none") or not math.isfinite(float(p)):
        return None
    return float(p)
