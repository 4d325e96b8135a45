"""Held-out confirmation of ResearchTask candidates (the trace split, not the replay set).

The cluster stage discovers a pattern on the search split of the traces and carries its spec.
Here the same pattern is recounted on the held-out split (`runs.insights.measure`), its rate
tested against the baseline rate outside it (the one-sided proportions z-test the cluster stage
used), and the p-values Holm-corrected across the candidates tested, as the gate does for tuning
candidates. Only then may a ResearchTask file exist.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from contextos_lab.gate.paired_tests import holm_adjust
from contextos_lab.insights.findings.families import family_column
from contextos_lab.insights.notes.research_queue import ResearchCandidate
from contextos_lab.insights.runs.insights import RULES, measure, runs_frame
from contextos_lab.insights.split import HELDOUT, SplitSpec
from contextos_lab.insights.support import rate_test

Basis = Literal["confirmed_on_heldout", "no_tuning_candidate_closes_gap", "unconfirmed"]


class ResearchConfirmation(BaseModel):
    """One candidate's held-out recount and whether it may become a ResearchTask file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    research_task_id: str
    trigger_insight_id: str
    #: The queued ResearchTask as the cluster stage built it (what emission writes).
    task: dict[str, Any]
    domain: str
    pattern_spec: dict[str, Any]
    search_counts: dict[str, Any]
    heldout: dict[str, Any]
    p_adjusted: float
    confirmed: bool
    basis: Basis
    reason: str


def load_candidates(insights_json: str | Path) -> list[ResearchCandidate]:
    """ResearchTask candidates from notebook 01 / `cluster` (`insights.json`)."""
    data = json.loads(Path(insights_json).read_text(encoding="utf-8"))
    return [ResearchCandidate.model_validate(c) for c in data.get("research_candidates", [])]


def heldout_runs(sources: Sequence[str], split: SplitSpec) -> pd.DataFrame:
    """The held-out split of the sources' runs, recomputed from the declared split."""
    from contextos_lab.insights.sources import load_sources

    loaded = load_sources(list(sources))
    runs = runs_frame(loaded.records, loaded.feedback, split)
    return runs[runs["split"] == HELDOUT]


def split_of(candidates: Sequence[ResearchCandidate]) -> SplitSpec:
    declared = [c.split for c in candidates if c.split]
    if len({json.dumps(s, sort_keys=True) for s in declared}) > 1:
        raise ValueError("research candidates declare different trace splits")
    raw = dict(declared[0]) if declared else {}
    return SplitSpec(
        heldout_fraction=float(raw.get("heldout_fraction", 0.3)),
        salt=str(raw.get("salt", SplitSpec().salt)),
    )


def _own_source(heldout: pd.DataFrame, candidate: ResearchCandidate) -> pd.DataFrame:
    """The held-out runs of the source the pattern was found in: it is recounted against the
    same population it was discovered on, whatever other sources were loaded beside it."""
    family = candidate.search_counts.get("family")
    return heldout if family is None else heldout[family_column(heldout) == family]


def confirm(
    candidates: Sequence[ResearchCandidate],
    heldout: pd.DataFrame,
    *,
    alpha: float = 0.05,
    tuning_closed_gap: bool = True,
    target_intent: str | None = None,
) -> list[ResearchConfirmation]:
    """Recount every candidate on the held-out runs and decide which may be emitted.

    Emitted (`confirmed`) when the pattern's held-out rate exceeds the baseline rate with
    Holm-adjusted p < alpha; or, when no tuning candidate was promoted (`tuning_closed_gap`
    False), for a candidate of the target's intent whose pattern still recurs on held-out (rate
    above baseline, at least one hit): tuning did not close that gap, so it is a knowledge gap.
    """
    tests = [_heldout_test(c, heldout) for c in candidates]
    # only a *missing* p-value counts as 1.0: a p of exactly 0.0 (z-test underflow) is real
    adjusted = holm_adjust(
        [1.0 if t.get("p_value") is None else float(t["p_value"]) for t in tests]
    )
    out = []
    for c, test, p_adj in zip(candidates, tests, adjusted, strict=True):
        basis, reason = _decide(c, test, p_adj, alpha, tuning_closed_gap, target_intent)
        out.append(
            ResearchConfirmation(
                research_task_id=c.task.research_task_id,
                trigger_insight_id=c.task.trigger_insight_id,
                task=c.task.model_dump(mode="json"),
                domain=c.task.scope.domain,
                pattern_spec=c.pattern_spec,
                search_counts=c.search_counts,
                heldout={k: v for k, v in test.items() if k != "trend"},
                p_adjusted=p_adj,
                confirmed=basis != "unconfirmed",
                basis=basis,
                reason=reason,
            )
        )
    return out


def _heldout_test(c: ResearchCandidate, heldout: pd.DataFrame) -> dict[str, Any]:
    """The candidate's rate test on its own source's held-out runs."""
    if c.pattern_spec.get("rule") not in RULES:
        # e.g. a feedback cluster: no rule recounts it on runs, so it cannot be confirmed.
        return {"p_value": 1.0, "untestable": c.pattern_spec.get("rule")}
    return rate_test(measure(c.pattern_spec, _own_source(heldout, c)).counts)


def _decide(
    c: ResearchCandidate,
    test: dict[str, Any],
    p_adj: float,
    alpha: float,
    tuning_closed_gap: bool,
    target_intent: str | None,
) -> tuple[Basis, str]:
    """The candidate's basis (`confirm` says when each holds) and the reason, in words."""
    rate, base = test.get("rate"), test.get("baseline_rate")
    above = rate is not None and base is not None and rate > base
    recurs = above and int(test.get("hits_in") or 0) > 0
    if above and p_adj < alpha:
        return "confirmed_on_heldout", (
            f"held-out rate {rate:.3g} > baseline {base:.3g} "
            f"(Holm-adjusted p={p_adj:.3g} < {alpha})"
        )
    if not tuning_closed_gap and recurs and _within(c.task.scope.domain, target_intent):
        return "no_tuning_candidate_closes_gap", (
            f"no tuning candidate was promoted for {target_intent} and the pattern recurs "
            f"on held-out (rate {rate:.3g} vs {base:.3g}, adjusted p={p_adj:.3g})"
        )
    if test.get("untestable"):
        rule = test["untestable"]
        return "unconfirmed", f"rule {rule!r} cannot be recounted on the held-out runs"
    if not test.get("n_in"):
        return "unconfirmed", "pattern not found on the held-out split"
    return "unconfirmed", f"held-out rate {rate:.3g} vs baseline {base}: adjusted p={p_adj:.3g}"


def _within(domain: str, intent: str | None) -> bool:
    """`a.b.execute` is within the target intent `a.b` (dotted prefix), and `a.b` itself."""
    return bool(intent) and (domain == intent or domain.startswith(f"{intent}."))
