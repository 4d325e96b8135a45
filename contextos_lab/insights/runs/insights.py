"""Insights from runs (seed 001's five kinds), each derived from DecisionRecords by a stated rule.

Every rule names a *stratum* (the records the pattern is about), a *baseline* (what it is
compared with) and an *outcome*; `support` then tests the outcome rate in the stratum against
the baseline. A pattern is a JSON-serialisable spec `{rule, kind, key}`, so the gate can
recount it on the held-out split with `measure(spec, heldout_frame)`.

A record is *failed* when its status is FAILED or DENIED, or its inputs say `failed: true`
(tau-bench: reward < 1, including runs that escalated). Its reason class is `inputs.reason_class`,
else the class of a correction on it, else `unclassified`.

The runs frame is built in `runs.columns` and the rules live in `runs.rules`; this module applies
them and recounts a pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from contextos_lab.insights.findings import Candidate, families, hold
from contextos_lab.insights.runs.columns import (
    _FAILED,
    _SHOULD_FINISH,
    UNCLASSIFIED,
    failure_table,
    runs_frame,
)
from contextos_lab.insights.runs.rules import (
    RULES,
    Masks,
    Rule,
    _agent_phase_candidates,
    _agent_phase_masks,
    _blocked_candidates,
    _blocked_masks,
    _detour_candidates,
    _detour_masks,
    _escalation_candidates,
    _escalation_masks,
    _extra_calls,
    _failure_candidates,
    _failure_masks,
    _gap_candidates,
    _gap_masks,
    _groups_at_least,
    _key_eq,
    _missing,
    _rate,
    annotation_flagged,
    modal_path,
)
from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.insights.support import Counts, share_of_failures, support_for
from contextos_lab.insights.synthesize import check_min_cluster_size
from contextos_lab.schemas.base import EnvelopeList, canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, Insight


@dataclass(frozen=True)
class Measured:
    counts: Counts
    member_ids: list[str]
    times: pd.Series

    @property
    def occurrences(self) -> int:
        return len(self.member_ids)


def measure(spec: dict[str, Any], frame: pd.DataFrame) -> Measured:
    """Recount a pattern spec on any frame (the search split here, held-out in the gate)."""
    rule = RULES[spec["rule"]]
    stratum, baseline, outcome = rule.masks(frame, spec["key"])
    members = stratum & outcome if rule.occurrence == "hits" else stratum
    counts = Counts(
        hits_in=int((stratum & outcome).sum()),
        n_in=int(stratum.sum()),
        hits_out=int((baseline & outcome).sum()),
        n_out=int(baseline.sum()),
    )
    chosen = frame[members]
    return Measured(counts, chosen["record_id"].tolist(), chosen["decided_at"])


def find_run_insights(
    frame: pd.DataFrame,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    rules: Sequence[str] | None = None,
    split: SplitSpec | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> EnvelopeList[Insight]:
    """Apply each rule to the search split of `frame`, one source at a time, and emit the
    insights that hold: Benjamini–Hochberg across each source's tests, overlapping insights
    merged (see `insights.findings`).

    `support` carries the rule text, its baseline and test, the spec, the search-split counts,
    the FDR standing and the split declaration, which is what the gate needs to recount the
    pattern on held-out.
    """
    return hold(
        run_insight_candidates(
            frame, min_cluster_size=min_cluster_size, rules=rules, split=split, window=window
        )
    )


def run_insight_candidates(
    frame: pd.DataFrame,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    rules: Sequence[str] | None = None,
    split: SplitSpec | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> list[Candidate]:
    """Every pattern a rule finds, per source (`findings.families`), before FDR and merging.

    Each source is analysed on its own rows only (its baselines, its trend window), so adding
    another source's files to the same folder changes none of its figures.
    """
    m = check_min_cluster_size(min_cluster_size)
    search = frame
    if "split" in frame and not (frame["split"] == SEARCH).all():  # else no copy of every run
        search = frame[frame["split"] == SEARCH]
    out: list[Candidate] = []
    for family, part in families(search):
        start, end = window or (part["decided_at"].min(), part["decided_at"].max())
        flagged = part.loc[annotation_flagged(part), ["record_id", "inputs"]]
        for name in rules or list(RULES):
            rule = RULES[name]
            # every group the rule considered counts in the FDR family (findings.fdr)
            screened = {"scope": rule.name, "considered": len(rule.candidates(part, 1))}
            for key in rule.candidates(part, m):
                spec = {"rule": rule.name, "kind": rule.kind.value, "key": key}
                got = measure(spec, part)
                if got.occurrences < m:
                    continue
                insight = _insight(rule, spec, key, got, part, (start, end), split)
                support = {
                    **insight.support,
                    "screened": screened,
                    "family": family,
                    "flagged_runs": _flagged_runs(flagged, got.member_ids),
                }
                out.append(
                    Candidate(
                        insight.model_copy(update={"support": support}),
                        frozenset(got.member_ids),
                    )
                )
    return out


def _insight(
    rule: Rule,
    spec: dict[str, Any],
    key: dict[str, Any],
    got: Measured,
    part: pd.DataFrame,
    window: tuple[datetime, datetime],
    split: SplitSpec | None,
) -> Insight:
    confidence, support = support_for(got.counts, got.times, *window)
    support["compared_with"] = rule.baseline
    if not _has_baseline(part, key):
        share = share_of_failures(got.occurrences, int(part["failed"].sum()))
        support = {**support, **share, "baseline_rate": None, "compared_with": share["baseline"]}
        confidence = 0.0
    intent = key.get("decision_key") or _modal_key(part, got.member_ids)
    return Insight(
        insight_id=new_id("ins", at=got.times.max(), seed=canonical_json(spec)),
        kind=rule.kind,
        intent=intent,
        pattern=rule.describe(key, got.occurrences),
        occurrences=got.occurrences,
        first_seen=got.times.min(),
        last_seen=got.times.max(),
        evidence_refs=tuple(got.member_ids[:50]),
        confidence=confidence,
        support={
            **support,
            "rule": rule.text,
            "source": "runs",
            "spec": spec,
            "key": key,
            "split": {
                "discovered_on": SEARCH,
                **(split.to_dict() if split else {"heldout_fraction": 0.0}),
            },
        },
    )


def _flagged_runs(flagged: pd.DataFrame, member_ids: list[str]) -> dict[str, Any]:
    """The member runs whose annotation contradicts the trace, with the loader's reason."""
    hit = flagged[flagged["record_id"].isin(member_ids)]
    return {
        "count": len(hit),
        "runs": [
            {"record_id": r, "flag": str(d.get("annotation_flag"))}
            for r, d in zip(hit["record_id"][:20], hit["inputs"][:20], strict=True)
        ],
    }


def _has_baseline(frame: pd.DataFrame, key: dict[str, Any]) -> bool:
    """A successful run to contrast with: of the same decision key when the pattern has one,
    else anywhere in the (one source's) frame."""
    scope = (
        _key_eq(frame, key["decision_key"]) if "decision_key" in key else frame["failed"].notna()
    )
    return bool((scope & ~frame["failed"].astype(bool)).any())


def _modal_key(frame: pd.DataFrame, ids: list[str]) -> str:
    keys = frame.loc[frame["record_id"].isin(ids), "decision_key"]
    return str(keys.mode().iloc[0]) if len(keys) else "unknown"


#: Names this module has always offered (the private ones too); the runs frame and the rules
#: now live in run_columns and run_rules.
__all__ = [
    "RULES",
    "UNCLASSIFIED",
    "_FAILED",
    "_SHOULD_FINISH",
    "Masks",
    "Measured",
    "Rule",
    "_agent_phase_candidates",
    "_agent_phase_masks",
    "_blocked_candidates",
    "_blocked_masks",
    "_detour_candidates",
    "_detour_masks",
    "_escalation_candidates",
    "_escalation_masks",
    "_extra_calls",
    "_failure_candidates",
    "_failure_masks",
    "_gap_candidates",
    "_gap_masks",
    "_groups_at_least",
    "_has_baseline",
    "_key_eq",
    "_missing",
    "_modal_key",
    "_rate",
    "failure_table",
    "find_run_insights",
    "measure",
    "modal_path",
    "run_insight_candidates",
    "runs_frame",
]
