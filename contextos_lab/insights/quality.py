"""How far an analysis of real traces can be trusted: figures a failure researcher checks.

Pure functions over a `ClusterReport` (and the loaded records), used by
`benchmarks/failure_analysis_quality.py` and the tests:

- `member_runs`: the runs each insight stands for (recounted from its spec on the search split;
  a correction cluster stands for its corrections);
- `duplicates`: insights that stand for exactly the same runs as an earlier insight;
- `coverage`: share of failed search-split runs that some insight stands for;
- `tau_action_diff_agreement`: on failed tau-bench runs whose reward info records tau-bench's
  own verdict, how often the derived class agrees with it: a state mismatch (`r_actions` = 0)
  must come with a non-empty diff of writes (and never the catch-all `state_mismatch`); an
  outputs failure (`r_outputs` = 0) with no write difference must be `missing_output`;
- `agent_phase_purity`: clusters formed from the trace alone (the speaker of the annotated step ×
  run phase), scored by purity against the annotators' `mistake_agent`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd

from contextos_lab.insights.findings.families import DEFAULT_FAMILY, family_column
from contextos_lab.insights.pipeline import ClusterReport
from contextos_lab.insights.runs.insights import measure
from contextos_lab.insights.split import SEARCH


def member_runs(report: ClusterReport) -> list[frozenset[str]]:
    """Recounted on the insight's own source's search-split runs (its statistics' population)."""
    search = report.runs[report.runs["split"] == SEARCH]
    family = family_column(search)
    clusters = {c.insight_id: c for c in report.clusters}
    out = []
    for insight in report.insights:
        if insight.support.get("source") == "runs":
            part = search[family == str(insight.support.get("family") or DEFAULT_FAMILY)]
            out.append(frozenset(measure(insight.support["spec"], part).member_ids))
            continue
        cluster = clusters.get(str(insight.support.get("cluster_id")))
        out.append(frozenset(cluster.feedback_ids if cluster else insight.evidence_refs))
    return out


def duplicates(report: ClusterReport) -> int:
    seen: set[frozenset[str]] = set()
    count = 0
    for members in member_runs(report):
        if members in seen:
            count += 1
        seen.add(members)
    return count


def coverage(report: ClusterReport) -> float | None:
    search = report.runs[report.runs["split"] == SEARCH]
    failed = set(search.loc[search["failed"], "record_id"])
    if not failed:
        return None
    covered = set().union(*member_runs(report)) if report.insights else set()
    return len(failed & covered) / len(failed)


def tau_action_diff_agreement(runs: pd.DataFrame) -> dict[str, Any]:
    rows = [
        d
        for d, failed in zip(runs["inputs"], runs["failed"], strict=True)
        if failed and isinstance(d, Mapping) and d.get("source") == "tau-bench"
    ]
    judged = [d for d in rows if d.get("ground_truth_verdict")]
    agree = 0
    for d in judged:
        diff = d.get("action_diff") or {}
        writes_differ = bool(diff.get("missing") or diff.get("extra"))
        if d["ground_truth_verdict"] == "actions":
            agree += writes_differ and d.get("reason_detail") != "state_mismatch"
        else:
            agree += writes_differ or d.get("reason_detail") == "missing_output"
    return {
        "failed_runs": len(rows),
        "with_verdict": len(judged),
        "agree": int(agree),
        "agreement": agree / len(judged) if judged else None,
        "classes": dict(Counter(str(d.get("reason_class")) for d in rows).most_common()),
    }


def agent_phase_purity(runs: pd.DataFrame) -> dict[str, Any]:
    rows = [
        d
        for d in runs["inputs"]
        if isinstance(d, Mapping) and d.get("mistake_agent") and d.get("phase")
    ]
    clusters: dict[tuple[str, str], Counter[str]] = {}
    for d in rows:
        key = (str(d.get("speaker_at_step")), str(d["phase"]))
        clusters.setdefault(key, Counter())[str(d["mistake_agent"])] += 1
    majority = sum(c.most_common(1)[0][1] for c in clusters.values())
    return {
        "annotated_runs": len(rows),
        "clusters": len(clusters),
        "purity": majority / len(rows) if rows else None,
        "flagged_annotations": sum(1 for d in rows if d.get("annotation_flag")),
    }


__all__ = [
    "agent_phase_purity",
    "coverage",
    "duplicates",
    "member_runs",
    "tau_action_diff_agreement",
]
