"""Insights that stand for (nearly) the same runs are one insight.

Two rules often pick out the same runs ("10 extra_write failures on K" and "6 runs on K repeat
cancel"), and showing both counts one observation twice. Overlap is *containment* (the overlap
coefficient |A ∩ B| / min(|A|, |B|)), not Jaccard: a small insight inside a large one is the
same evidence even when the large one has more. Containment ≥ Jaccard, so no two insights left
overlap by ≥ MERGE_AT under either measure.

Merging is greedy in order of standing (findings first), q-value, size, then id: each insight
joins the first kept insight it overlaps by ≥ MERGE_AT, else is kept. The kept one keeps its own
statistics and lists what it absorbed in `support["merged"]` (with a mechanism's count of
low-confidence members). Insights of different sources
never merge (their runs are disjoint anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextos_lab.insights.findings.candidate import Candidate

MERGE_AT = 0.8
MEASURE = "containment |A∩B|/min(|A|,|B|)"


def containment(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _priority(c: Candidate) -> tuple[Any, ...]:
    s = c.insight.support
    q = s.get("q_value")
    return (
        s.get("standing") != "finding",
        q is None,
        q if q is not None else 1.0,
        -c.insight.occurrences,
        c.insight.insight_id,
    )


def merge_overlapping(candidates: Sequence[Candidate], at: float = MERGE_AT) -> list[Candidate]:
    """Candidates with each group of ≥ `at` containment merged into its first-priority member;
    the survivors keep their input order."""
    order = sorted(range(len(candidates)), key=lambda i: _priority(candidates[i]))
    kept: list[int] = []
    absorbed: dict[int, list[dict[str, Any]]] = {}
    for i in order:
        c = candidates[i]
        into = next(
            (
                k
                for k in kept
                if candidates[k].family == c.family
                and containment(candidates[k].members, c.members) >= at
            ),
            None,
        )
        if into is None:
            kept.append(i)
            continue
        s = c.insight.support
        absorbed.setdefault(into, []).append(
            {
                "insight_id": c.insight.insight_id,
                "pattern": c.insight.pattern,
                "occurrences": c.insight.occurrences,
                "overlap": round(containment(candidates[into].members, c.members), 4),
                "p_value": s.get("p_value"),
                "q_value": s.get("q_value"),
                "standing": s.get("standing"),
                "spec": s.get("spec"),
                # how many of a mechanism's runs rest on low-confidence attributions
                **{k: s[k] for k in ("low_confidence_members",) if k in s},
            }
        )
    out = []
    for i in sorted(kept):
        c = candidates[i]
        if i in absorbed:
            support = {
                **c.insight.support,
                "merged": absorbed[i],
                "merge_rule": f"{MEASURE} >= {at:g}",
            }
            c = Candidate(c.insight.model_copy(update={"support": support}), c.members)
        out.append(c)
    return out
