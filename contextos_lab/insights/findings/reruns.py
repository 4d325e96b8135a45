"""A finding's standing across re-runs of `cluster --store` on data that keeps arriving.

Benjamini–Hochberg (`fdr`) holds the false discovery rate of one run. Run daily on a growing
store, the same null patterns are tested again every day, and a pattern that drifts under
q ≤ 0.05 on any one of them would be shown as a finding: repetition alone makes findings.

The rule here keeps the chance that a store ever shows a null finding at or below `ALPHA`
however many runs it gets. Each run that brings new data is a *look* (`look` = 1 + the last
look recorded in the store; a re-run on unchanged data is the same look and changes nothing).
At look t a finding needs q ≤ ALPHA · γ_t with γ_t = 6 / (π² t²), so Σ γ_t = 1: under the global
null, BH at level ALPHA·γ_t shows a finding with probability at most ALPHA·γ_t, and the union
over every look is at most ALPHA (alpha spending over looks, the classical Bonferroni-style
construction of a sequential test; written here because the online-FDR package's procedures
take a stream of *distinct* hypotheses, not the same ones re-tested on growing data). A
pattern shown as a finding at an earlier look keeps that standing (a rejection is final); the
look and threshold are recorded in `support["rerun"]`. The identity of a pattern across looks
is its family, rule and key, not its id (the id changes as evidence accrues). The spending is
valid only with valid p-values: exact tests (`insights.support`) and BH families that count the
groups screened out by size (`findings.fdr`); see docs/monitoring.md, "Findings across re-runs".
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from contextos_lab.insights.findings.fdr import ALPHA, EXPLORATORY, FINDING
from contextos_lab.schemas.insight import Insight

RULE = "alpha spent over looks: q <= 0.05 * 6/(pi^2 t^2) at look t; earlier findings stand"


def share(look: int) -> float:
    """γ_t: the share of ALPHA look `t` (1-based) may spend; the shares sum to 1."""
    return 6.0 / (math.pi**2 * look**2)


def identity(insight: Insight) -> str:
    """The pattern an insight tests, the same across looks: family, rule and key."""
    s = insight.support
    raw = json.dumps([s.get("family"), s.get("rule"), s.get("key")], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def last_look(stored: Iterable[Insight]) -> int:
    """The highest look recorded in the store (0: none yet)."""
    looks = [
        int(i.support["rerun"]["look"])
        for i in stored
        if isinstance(i.support.get("rerun"), dict) and "look" in i.support["rerun"]
    ]
    return max(looks, default=0)


def hold_across_reruns(insights: Sequence[Insight], stored: Sequence[Insight]) -> list[Insight]:
    """The run's insights with their standing decided at this look (see the module doc); an
    insight already stored (same id: this data was seen) is returned as it was stored."""
    by_id = {i.insight_id: i for i in stored}
    new = [i for i in insights if i.insight_id not in by_id]
    look = last_look(stored) + (1 if new else 0)
    earlier = {identity(i) for i in stored if i.support.get("standing") == FINDING}
    threshold = ALPHA * share(max(look, 1))
    return [by_id.get(i.insight_id) or _at_look(i, look, threshold, earlier) for i in insights]


def _at_look(insight: Insight, look: int, threshold: float, earlier: set[str]) -> Insight:
    support: dict[str, Any] = dict(insight.support)
    q = support.get("q_value")
    standing = support.get("standing")
    stands = identity(insight) in earlier
    support["rerun"] = {
        "look": look, "threshold": threshold, "rule": RULE, "stood_before": stands,
        "run_standing": standing,  # what this run alone (BH) said
    }  # fmt: skip
    if standing == FINDING and not stands and (q is None or q > threshold):
        support["standing"] = EXPLORATORY
        support["standing_reason"] = (
            f"q {q:.3g} <= {ALPHA:g} in this run, but above {threshold:.3g}, the threshold of "
            f"look {look} of this store (re-runs on growing data spend the error rate over looks)"
        )
    return insight.model_copy(update={"support": support})
