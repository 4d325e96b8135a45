"""Attribution and mechanism clusters one source at a time, as candidates for the statistics layer.

A mechanism cluster's support is its share of its source's failed runs, so clustering each source
on its own keeps one source's figures unchanged when another source's files sit in the folder
(the rule `insights.findings.families` applies to every other insight).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from contextos_lab.insights.attribution.insights import mechanism_insights
from contextos_lab.insights.attribution.mechanisms import label_runs, mechanism_clusters
from contextos_lab.insights.attribution.runs import COLUMNS, attribution_frame
from contextos_lab.insights.findings import Candidate, families
from contextos_lab.insights.findings.families import family_column
from contextos_lab.insights.split import SplitSpec


def attribute_by_source(
    found: Mapping[str, Mapping[str, Any] | None],
    search_runs: pd.DataFrame,
    min_size: int,
    split: SplitSpec,
) -> tuple[pd.DataFrame, pd.DataFrame, list[Candidate]]:
    """(attributions with their cluster id, mechanism clusters, one candidate per cluster),
    from each failed run's trace attribution (`found`: trace id → `runs.trace_attribution`),
    so the traces themselves need not be held.

    Cluster ids are `m1, m2, …` for one source and `<source>:m1, …` when several share the run.
    """
    several = family_column(search_runs).nunique() > 1
    attributions: list[pd.DataFrame] = []
    clusters: list[pd.DataFrame] = []
    candidates: list[Candidate] = []
    for family, runs in families(search_runs):  # one source's rows at a time
        found_here = attribution_frame(found, runs)
        mechanisms = mechanism_clusters(found_here, min_size)
        if several:
            mechanisms["cluster"] = [f"{family}:{c}" for c in mechanisms["cluster"]]
        found_here["cluster"] = label_runs(found_here, mechanisms)
        attributions.append(found_here)
        clusters.append(mechanisms)
        for insight, members in mechanism_insights(mechanisms, runs, min_size, split):
            support = {**insight.support, "family": family}
            candidates.append(Candidate(insight.model_copy(update={"support": support}), members))
    columns = [*COLUMNS, "cluster"]
    return (
        _concat(attributions, columns),
        _concat(clusters, list(mechanism_clusters(pd.DataFrame()).columns)),
        candidates,
    )


def _concat(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)


__all__ = ["attribute_by_source"]
