"""The cluster analysis against the experience store: read what `ingest` stored, write back
the typed clusters and insights with their upstream links (so the store records upstream
hashes and `lineage` walks from an insight to the operator corrections)."""

from __future__ import annotations

from typing import Any

from contextos_lab.insights.pipeline import ClusterReport
from contextos_lab.insights.sources import Loaded
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry


def loaded_from_store(store: Any) -> Loaded:
    """Every stored decision record and feedback entry, as the analysis' input."""
    loaded = Loaded(
        records=list(store.list(DecisionRecord)), feedback=list(store.list(FeedbackEntry))
    )
    loaded.sources.append({"source": str(store.url), "kind": "store"})
    return loaded


def store_report(report: ClusterReport, loaded: Loaded, store: Any) -> str:
    """Append clusters (upstream: their feedback) and insights (upstream: their cluster, else
    the stored decision records and feedback they cite). Re-running stores nothing twice."""
    known = {r.record_id for r in loaded.records} | {f.id for f in loaded.feedback}
    clusters = list(report.clusters)
    outcomes = store.append_many(clusters) if clusters else []
    ups: dict[str, list[str]] = {}
    for insight in report.insights:
        cluster_id = insight.support.get("cluster_id")
        if isinstance(cluster_id, str):
            ups[insight.insight_id] = [cluster_id]
        else:
            ups[insight.insight_id] = [e for e in insight.evidence_refs if e in known]
    insights = list(report.insights)
    outcomes += store.append_many(insights, upstream=ups) if insights else []
    new = sum(1 for o in outcomes if o.status == "stored")
    return f"{len(clusters)} InsightClusters, {len(insights)} insights ({new} rows new)"
