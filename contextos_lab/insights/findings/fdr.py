"""Benjamini–Hochberg across every tested insight of a source: which insights are findings.

Each candidate insight carries one one-sided test (see `insights.support`). Testing many
patterns and showing those with a small p would show noise as findings, so the p-values of one
source's insights are adjusted together (statsmodels `multipletests`, method `fdr_bh`, the
false discovery rate held at `ALPHA`). The family is the source, not the whole run of the
command: a source's findings must not change because another source's files sit in the same
folder (see `families`). Every tested hypothesis counts in the family, including those later
merged into an overlapping insight.

Patterns are tested only once they reach `min_cluster_size` members, and that count is part of
the test's own statistic: testing only the groups that reached it is a selection, and the
smaller the family the lower BH's bar. So the groups a rule *considered* (every group with at
least one member) count in the family too: each candidate carries `support["screened"] =
{"scope": rule, "considered": N}`, and the N − tested groups screened out by count enter BH as
p = 1. That is conservative (their real p could be smaller, which would only let BH reject
more), and it is what keeps `cluster --store` re-runs on null data from showing findings
(docs/monitoring.md, "Findings across re-runs").

`standing` is `finding` only for a test that ran against a real baseline and has q ≤ ALPHA;
everything else is `exploratory`, with the reason ("no successful baseline", "no test could be
run: …", "q above the FDR threshold"). `confidence` (a field seed 001 defines, so it stays) is
1 − q: how surely the pattern's rate exceeds its baseline once the source's multiple testing is
accounted for; 0 when no test ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from statsmodels.stats.multitest import multipletests

from contextos_lab.insights.findings.candidate import Candidate, tested_p

ALPHA = 0.05
METHOD = "Benjamini-Hochberg (statsmodels multipletests, fdr_bh)"
CONFIDENCE_IS = "1 - q_value (Benjamini-Hochberg within the source's tests); 0 when no test ran"
FINDING = "finding"
EXPLORATORY = "exploratory"


def control_fdr(candidates: Sequence[Candidate], alpha: float = ALPHA) -> list[Candidate]:
    """Each candidate with `q_value`, `standing`, its reason and `confidence` = 1 − q set."""
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(candidates):
        if tested_p(c.insight.support) is not None:
            by_family[c.family].append(i)
    q: dict[int, float] = {}
    sizes: dict[str, int] = {}
    screened: dict[str, int] = {}
    for family, idx in by_family.items():
        pvals = [tested_p(candidates[i].insight.support) for i in idx]
        screened[family] = screened_out([candidates[i].insight.support for i in idx])
        padded = [*pvals, *[1.0] * screened[family]]
        _, adjusted, _, _ = multipletests(padded, alpha=alpha, method="fdr_bh")
        q.update({i: float(a) for i, a in zip(idx, adjusted[: len(idx)], strict=True)})
        sizes[family] = len(idx)
    out = []
    for i, c in enumerate(candidates):
        support = dict(c.insight.support)
        m = sizes.get(c.family, 0)
        support.update(
            family=c.family,
            fdr={
                "method": METHOD,
                "alpha": alpha,
                "family": c.family,
                "tests_in_family": m,
                "screened_in_family": screened.get(c.family, 0),
            },
            q_value=q.get(i),
            confidence_is=CONFIDENCE_IS,
        )
        standing, reason = _standing(support, q.get(i), alpha, m)
        support.update(standing=standing, standing_reason=reason)
        support["test_statement"] = _statement(support, reason)
        confidence = 0.0 if q.get(i) is None else max(0.0, min(1.0, 1.0 - q[i]))
        insight = c.insight.model_copy(update={"support": support, "confidence": confidence})
        out.append(Candidate(insight, c.members))
    return out


def screened_out(supports: Sequence[dict[str, Any]]) -> int:
    """Groups the family's rules considered but did not test (below the size to be a pattern):
    per scope, `considered` minus the tests of that scope present."""
    considered: dict[str, int] = {}
    tested: dict[str, int] = defaultdict(int)
    for s in supports:
        mark = s.get("screened")
        if isinstance(mark, dict) and "scope" in mark:
            scope = str(mark["scope"])
            considered[scope] = max(considered.get(scope, 0), int(mark.get("considered", 0)))
            tested[scope] += 1
    return sum(max(0, n - tested[scope]) for scope, n in considered.items())


def _standing(support: dict[str, Any], q: float | None, alpha: float, m: int) -> tuple[str, str]:
    extra = int((support.get("fdr") or {}).get("screened_in_family") or 0)
    over = f"{m} tests" + (f" and {extra} groups screened out by size" if extra else "")
    if q is None:
        if support.get("baseline") == "no successful baseline" or "share_of_failures" in support:
            return EXPLORATORY, "no successful baseline"
        return EXPLORATORY, f"no test could be run: {support.get('test') or 'no test'}"
    family = support["family"]
    if q <= alpha:
        return FINDING, f"q {q:.3g} <= {alpha:g} (Benjamini-Hochberg over {over} of {family})"
    return EXPLORATORY, (
        f"q {q:.3g} above the FDR threshold {alpha:g} (Benjamini-Hochberg over {over} of {family})"
    )


def _statement(support: dict[str, Any], reason: str) -> str:
    """One sentence a reader can check: the rates, the baseline, the test and its verdict."""
    if support.get("q_value") is None:
        share = support.get("share_of_failures")
        told = f"; explains {share:.3g} of the source's failures" if share is not None else ""
        return f"exploratory: {reason}{told}"
    baseline = support.get("compared_with") or "the rule's comparison runs"
    return (
        f"rate {support['rate']:.3g} ({support['hits_in']}/{support['n_in']}) vs "
        f"{support['baseline_rate']:.3g} ({support['hits_out']}/{support['n_out']}) in "
        f"{baseline}; {support.get('test')} p={support['p_value']:.3g}; {reason}"
    )
