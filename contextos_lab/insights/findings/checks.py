"""The figures a benchmark reports on this layer, each computed independently of the code that
produced the labels it checks:

- `tau_class_consistency`: every failed tau-bench run's failure class is read against the
  stored ground-truth diff (`inputs.action_diff`) with rules written here from the diff alone;
- `overlapping_pairs`: pairs of shown insights of one source whose recounted members overlap by
  ≥ MERGE_AT (containment, the stricter of containment and Jaccard);
- `below_fdr_shown_as_findings`: shown findings whose test, re-adjusted here with
  Benjamini–Hochberg over every test of its source (merged ones included), has q > alpha, or
  that had no test at all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import pandas as pd
from statsmodels.stats.multitest import multipletests

from contextos_lab.insights.findings.fdr import ALPHA, FINDING
from contextos_lab.insights.findings.overlap import MERGE_AT, containment
from contextos_lab.schemas.insight import Insight


def _consistent(d: Mapping[str, Any]) -> bool:
    diff = d.get("action_diff") or {}
    missing, extra = Counter(diff.get("missing") or ()), Counter(diff.get("extra") or ())
    argued = diff.get("wrong_arguments") or {}
    alone_missing, alone_extra = missing - extra, extra - missing
    cls, action, called = d.get("reason_class"), d.get("reason_action"), d.get("reason_called")
    if cls == "wrong_arguments":
        return action in argued and missing[action] > 0 and extra[action] > 0
    if cls == "wrong_tool":
        return (
            alone_missing[action] > 0
            and alone_extra[called] > 0
            and action != called
            and action not in argued
        )
    if cls == "extra_write":
        return not missing and extra[action] > 0
    if cls in ("transferred_to_human", "step_limit"):
        return not extra  # a run that made a wrong or extra write is classed by that write
    if cls == "premature_end":
        return missing[action] > 0 and not extra and not d.get("taken_writes")
    if cls == "missing_action":
        if d.get("reason_detail") == "missing_output":
            return not missing and not extra
        return missing[action] > 0 and not extra
    if cls == "state_mismatch":
        return not missing and not extra
    return False


def tau_class_consistency(runs: pd.DataFrame) -> dict[str, Any]:
    """Share of failed tau-bench runs whose class agrees with the stored diff, and the ones
    that do not (task, class, detail, diff). A run loaded without ground truth has neither a
    diff nor a class: it is counted apart (`without_ground_truth`), not judged."""
    failed_tau = [
        d
        for d, failed in zip(runs["inputs"], runs["failed"], strict=True)
        if failed and isinstance(d, Mapping) and d.get("source") == "tau-bench"
    ]
    rows = [d for d in failed_tau if d.get("action_diff") is not None or d.get("reason_class")]
    bad = [d for d in rows if not _consistent(d)]
    return {
        "failed_runs": len(rows),
        "without_ground_truth": len(failed_tau) - len(rows),
        "consistent": len(rows) - len(bad),
        "share": (len(rows) - len(bad)) / len(rows) if rows else None,
        "inconsistent": [
            {k: d.get(k) for k in ("task_id", "reason_class", "reason_detail", "action_diff")}
            for d in bad[:20]
        ],
        "classes": dict(Counter(str(d.get("reason_class")) for d in rows).most_common()),
    }


def overlapping_pairs(
    insights: Sequence[Insight], members: Sequence[frozenset[str]], at: float = MERGE_AT
) -> list[tuple[str, str, float]]:
    """(id, id, containment) of every pair of one source's insights overlapping by ≥ `at`."""
    out = []
    for (a, ma), (b, mb) in combinations(zip(insights, members, strict=True), 2):
        if a.support.get("family") != b.support.get("family"):
            continue
        c = containment(ma, mb)
        if c >= at:
            out.append((a.insight_id, b.insight_id, round(c, 4)))
    return out


def below_fdr_shown_as_findings(insights: Sequence[Insight], alpha: float = ALPHA) -> list[str]:
    """Ids of insights shown as findings that do not survive BH over their source's tests."""
    pvals: dict[str, list[float]] = defaultdict(list)
    for i in insights:
        family = str(i.support.get("family"))
        for s in (i.support, *(i.support.get("merged") or ())):
            if s.get("p_value") is not None and s.get("q_value") is not None:
                pvals[family].append(float(s["p_value"]))
    bad = []
    for i in insights:
        if i.support.get("standing") != FINDING:
            continue
        p, family = i.support.get("p_value"), str(i.support.get("family"))
        if p is None or i.support.get("q_value") is None:
            bad.append(i.insight_id)
            continue
        family_p = pvals[family]
        fdr = i.support.get("fdr") or {}
        if len(family_p) != fdr.get("tests_in_family"):
            bad.append(i.insight_id)  # the family cannot be rebuilt: the finding is unchecked
            continue
        padded = [*family_p, *[1.0] * int(fdr.get("screened_in_family") or 0)]
        _, q, _, _ = multipletests(padded, alpha=alpha, method="fdr_bh")
        mine = max(
            float(qq) for pp, qq in zip(family_p, q[: len(family_p)], strict=True) if pp == float(p)
        )
        if mine > alpha:
            bad.append(i.insight_id)
    return bad
