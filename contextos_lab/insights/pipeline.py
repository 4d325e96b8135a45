"""One analysis over loaded sources, shared by notebook 01 and `contextos-lab cluster`.

Sources are read by `insights.sources` (paths sniffed by content, or `synthetic[:N[:SEED]]`);
this module clusters them and writes the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.insights.attribution.by_source import attribute_by_source
from contextos_lab.insights.attribution.mechanisms import mechanism_clusters
from contextos_lab.insights.attribution.protocol import Attributor
from contextos_lab.insights.attribution.registry import get_attributor
from contextos_lab.insights.attribution.runs import COLUMNS as ATTRIBUTION_COLUMNS
from contextos_lab.insights.attribution.runs import failed_rows, trace_attributions
from contextos_lab.insights.attribution.spilled import SpilledAttributions
from contextos_lab.insights.compact_rows import ANALYSIS_COLUMNS, CompactRows
from contextos_lab.insights.findings import DEFAULT_FAMILY, Candidate, family_of_inputs, hold
from contextos_lab.insights.notes.research_queue import ResearchCandidate, research_candidates
from contextos_lab.insights.report_json import Fill, as_dict, dumped, frame_rows, write_report_json
from contextos_lab.insights.routing import routing_frame
from contextos_lab.insights.run_rows import RunRows
from contextos_lab.insights.runs.insights import (
    RULES,
    failure_table,
    run_insight_candidates,
    runs_frame,
)
from contextos_lab.insights.sources import (
    Loaded,
)
from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.insights.synthesize import (
    check_min_cluster_size,
    insights_from_clusters,
    synthesize_insights,
)
from contextos_lab.insights.text_clusters import TextClustering, agreement, cluster_texts
from contextos_lab.loaders.who_and_when import ANNOTATOR
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, Insight, InsightCluster

_UNMATCHED_COLUMNS = ("feedback_id", "trace_id", "decision_record_id", "split")
#: Signers whose "feedback" is a data set's annotation: the answer key that scores the analysis
#: (attribution-vs-annotation tables), never an input to it.
ANSWER_KEY_SIGNERS = frozenset({ANNOTATOR})
#: Run rules that group by an annotation; left out of discovery for the same reason.
ANSWER_KEY_RULES = frozenset({"agent_phase"})


@dataclass
class ClusterReport:
    split: SplitSpec
    runs: pd.DataFrame
    failures: pd.DataFrame
    clusters: EnvelopeList[InsightCluster]
    insights: EnvelopeList[Insight]
    routing: pd.DataFrame
    candidates: list[ResearchCandidate]
    text: TextClustering | None
    quarantined: pd.DataFrame
    #: Feedback whose trace has no decision record among the loaded sources (feedback_id,
    #: trace_id, decision_record_id, split). Reported, not dropped: the search-split ones are
    #: still clustered; the run-level rules cannot see them.
    feedback_without_record: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(_UNMATCHED_COLUMNS))
    )

    #: Held-out counts (runs, feedback) kept from discovery for the gate, and how many
    #: search-split corrections were folded into the failed run they correct.
    heldout: dict[str, int] = field(default_factory=dict)
    #: One row per failed search-split run with a trace: the attributed agent and step with
    #: evidence, the run's mechanism and cluster; `annotated_*` columns are the answer key.
    attributions: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=[*ATTRIBUTION_COLUMNS, "cluster"])
    )
    #: Mechanism clusters of the attributed runs (see `attribution.mechanisms`).
    mechanisms: pd.DataFrame = field(default_factory=lambda: mechanism_clusters(pd.DataFrame()))
    #: Reads back the attribution rows' fields kept on disk (`attribution.spilled`), if any.
    attribution_fill: Fill | None = None

    def insights_frame(self) -> pd.DataFrame:
        """One row per insight, findings first: `standing` is `finding` only where the test ran
        against a real baseline and survived Benjamini–Hochberg within its source; the rest are
        `exploratory`, with the reason in `test`. (`Insight.confidence` is 1 − q_value.)"""
        rows = [
            {
                "insight_id": i.insight_id,
                "kind": i.kind.value,
                "intent": i.intent,
                "pattern": i.pattern,
                "occurrences": i.occurrences,
                "standing": i.support.get("standing"),
                "source": i.support.get("family"),
                "rate": i.support.get("rate"),
                "baseline_rate": i.support.get("baseline_rate"),
                "compared_with": i.support.get("baseline") or i.support.get("compared_with"),
                "p_value": i.support.get("p_value"),
                "q_value": i.support.get("q_value"),
                "test": i.support.get("test_statement"),
                "merged": len(i.support.get("merged") or ()),
                "flagged_runs": (i.support.get("flagged_runs") or {}).get("count", 0),
                "share_of_failures": i.support.get("share_of_failures"),
                "share_ci95": i.support.get("share_ci95"),
                "trend": (i.support.get("trend") or {}).get("direction"),
                "first_seen": i.first_seen,
                "last_seen": i.last_seen,
            }
            for i in self.insights
        ]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return frame
        order = (frame["standing"] != "finding").astype(int)
        return frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)

    def timeline(self) -> pd.DataFrame:
        """Occurrences per day of each run-derived insight (rows: day; one column per insight,
        labelled "pattern (insight_id)" so two insights never share a column).

        Counts come from the decision records an insight cites, so each column sums to the
        evidence it carries among the loaded runs. Runs without a clock (`NO_CLOCK`) are left
        out: their order in a file is no time line.
        """
        timed = self.runs[self.runs["timed"]] if "timed" in self.runs else self.runs
        decided = timed.set_index("record_id")["decided_at"]
        series = {}
        for insight in self.insights:
            if insight.support.get("source") != "runs":
                continue
            times = decided.reindex(list(insight.evidence_refs)).dropna()
            series[f"{insight.pattern} ({insight.insight_id})"] = times.dt.floor("D").value_counts()
        if not series:
            return pd.DataFrame()
        return pd.DataFrame(series).fillna(0).astype(int).sort_index()

    def parts(self) -> dict[str, Any]:
        """The report's top-level keys; the long lists as `Items`, read when written."""
        text = None
        if self.text is not None:
            text = {
                "backend": self.text.backend,
                "k": self.text.k,
                "silhouette": self.text.silhouette,
                "decision": self.text.decision,
                "agreement": self.text.agreement,
                "clusters": self.text.clusters.to_dict("records"),
            }
        return {
            "split": self.split.to_dict(),
            "failure_table": frame_rows(self.failures),
            "insight_clusters": dumped(self.clusters),
            "insights": dumped(self.insights),
            "routing": frame_rows(self.routing),
            "research_candidates": dumped(self.candidates),
            "text_clusters": text,
            "quarantined": len(self.quarantined),
            "feedback_without_record": frame_rows(self.feedback_without_record),
            "heldout": self.heldout,
            "attributions": frame_rows(self.attributions, fill=self.attribution_fill),
            "mechanism_clusters": frame_rows(self.mechanisms),
        }

    def to_json(self) -> dict[str, Any]:
        """The report as `insights.json` holds it (`write_report` writes it piece by piece)."""
        return as_dict(self.parts())


def analyse(
    loaded: Loaded,
    *,
    since: datetime | None = None,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    heldout_fraction: float = 0.3,
    text_backend: str | None = "tfidf",
    max_external_calls: int = 0,
    attributor: Attributor | None = None,
) -> ClusterReport:
    """Cluster on the search split only; the held-out split is left for the gate.

    Feedback is split by its own trace id with the same `SplitSpec` as the runs (whether or not
    its trace has a decision record), so no held-out feedback reaches discovery. Feedback whose
    trace has no record among the loaded sources is listed in `feedback_without_record`.
    """
    m = check_min_cluster_size(min_cluster_size)
    split = SplitSpec(heldout_fraction)
    observed = [f for f in loaded.feedback if f.signed_by not in ANSWER_KEY_SIGNERS]
    runs = runs_frame(_records_frame(loaded.records, since), observed, split)
    search_runs = runs[runs["split"] == SEARCH]  # one copy for every step below (scale.md)
    fb_split = split.assign(f.trace_id for f in observed).to_numpy()
    feedback = [f for f, s in zip(observed, fb_split, strict=True) if s == SEARCH]
    # One observation per failed run: a correction on a run that failed is a second source of
    # that run (its class and text), not a second observation to cluster again.
    failed_ids = _failed_among(runs, {f.decision_record_id for f in feedback})
    free = [f for f in feedback if f.decision_record_id not in failed_ids]
    clusters, candidates = _feedback_insights(free, runs, since, m)
    candidates += run_insight_candidates(
        search_runs,
        min_cluster_size=m,
        split=split,
        rules=[r for r in RULES if r not in ANSWER_KEY_RULES],
    )
    found = _attributed(loaded, search_runs, attributor)
    attributions, mechanisms, mechanism_candidates = attribute_by_source(
        found, search_runs, m, split
    )
    candidates += mechanism_candidates
    insights = hold(candidates)
    return ClusterReport(
        split=split,
        runs=runs,
        failures=failure_table(search_runs, m),
        clusters=clusters,
        insights=insights,
        routing=routing_frame(insights),
        candidates=research_candidates(insights, max_external_calls=max_external_calls),
        text=_text_clusters(runs, feedback, text_backend),
        quarantined=loaded.quarantined_frame(),
        feedback_without_record=_without_record(observed, fb_split, loaded.records),
        heldout={
            "runs": int((runs["split"] != SEARCH).sum()),
            "feedback": int((fb_split != SEARCH).sum()),
            "feedback_folded_into_failed_runs": len(feedback) - len(free),
        },
        attributions=attributions,
        mechanisms=mechanisms,
        attribution_fill=found.fill if isinstance(found, SpilledAttributions) else None,
    )


def _failed_among(runs: pd.DataFrame, ids: set[str | None]) -> set[str]:
    """The failed runs among `ids`: never a set of every failed run's id (a corpus has many,
    and most runs have no feedback)."""
    return set(runs.loc[runs["failed"] & runs["record_id"].isin(ids), "record_id"])


def _without_record(
    observed: Sequence[FeedbackEntry],
    fb_split: np.ndarray,
    records: Sequence[DecisionRecord] | RunRows,
) -> pd.DataFrame:
    """Feedback whose trace has no decision record among the loaded sources (all of them,
    whatever `since` kept)."""
    if not observed:  # no set of every trace id for nothing
        return pd.DataFrame(columns=list(_UNMATCHED_COLUMNS))
    traced = (
        set(records.trace_ids()) if isinstance(records, RunRows) else {r.trace_id for r in records}
    )
    return pd.DataFrame(
        [
            (f.id, f.trace_id, f.decision_record_id, s)
            for f, s in zip(observed, fb_split, strict=True)
            if f.trace_id not in traced
        ],
        columns=list(_UNMATCHED_COLUMNS),
    )


def _feedback_insights(
    free: Sequence[FeedbackEntry],
    runs: pd.DataFrame,
    since: datetime | None,
    m: int,
) -> tuple[EnvelopeList[InsightCluster], list[Candidate]]:
    """Clusters of the search feedback and their insight candidates. Each source on its own
    (baselines, windows, FDR family): a source's figures never change because another
    source's files were loaded beside it."""
    cited = runs[runs["record_id"].isin({f.decision_record_id for f in free})]  # not every run
    family_of = dict(zip(cited["record_id"], cited["inputs"].map(family_of_inputs), strict=True))
    by_family: dict[str, list[FeedbackEntry]] = {}
    for f in free:
        by_family.setdefault(family_of.get(f.decision_record_id, DEFAULT_FAMILY), []).append(f)
    cluster_list: list[InsightCluster] = []
    candidates: list[Candidate] = []
    for family, part in sorted(by_family.items()):
        found = synthesize_insights(part, since, min_cluster_size=m)
        cluster_list += list(found)
        members = {c.insight_id: frozenset(c.feedback_ids) for c in found}
        candidates += [
            Candidate(i, members[str(i.support["cluster_id"])])
            for i in insights_from_clusters(found, part, since, family=family)
        ]
    return EnvelopeList(cluster_list, InsightCluster), candidates


def _text_clusters(
    runs: pd.DataFrame, feedback: Sequence[FeedbackEntry], backend: str | None
) -> TextClustering | None:
    """The search feedback's free texts clustered (at least 3), with their agreement with the
    annotations when the traces carry any (read as the answer key, never as a feature)."""
    texts = [(f.id, f.override_reason_text) for f in feedback if f.override_reason_text]
    if not backend or len(texts) < 3:
        return None
    text = cluster_texts([t for _, t in texts], [i for i, _ in texts], backend=backend)
    labels = _annotation_labels(runs, feedback)
    if labels:
        text.agreement = agreement(text, labels, "mistake_agent")
    return text


def _records_frame(records: list[DecisionRecord] | RunRows, since: datetime | None) -> pd.DataFrame:
    """The records decided at or after `since` as a frame (`RunRows`: from its columns; a
    corpus', `CompactRows`, with only the columns the analysis reads)."""
    if isinstance(records, CompactRows):
        return records.frame(since, ANALYSIS_COLUMNS)
    if isinstance(records, RunRows):
        return records.frame(since)
    kept = [r for r in records if since is None or r.decided_at >= since]
    return EnvelopeList(kept, DecisionRecord).to_frame()


def _attributed(
    loaded: Loaded, search_runs: pd.DataFrame, attributor: Attributor | None
) -> Mapping[str, Mapping[str, Any] | None]:
    """Trace id → trace attribution for the failed search runs: what streaming already
    computed (`loaded.attributed`, not copied), else read from the loaded traces (the last
    one of an id)."""
    if not loaded.traces:
        return loaded.attributed
    kept = loaded.attributed  # rows on disk come back whole: this dict is what gets written
    found: dict[str, Mapping[str, Any] | None] = (
        {t: kept.whole(t) for t in kept} if isinstance(kept, SpilledAttributions) else dict(kept)
    )
    model = attributor or get_attributor()
    by_trace = {t.trace_id: t for t in loaded.traces}
    wanted = set(failed_rows(search_runs)["trace_id"]) & set(by_trace)
    found.update(trace_attributions([by_trace[t] for t in sorted(wanted)], model))
    return found


def _annotation_labels(runs: pd.DataFrame, feedback: Sequence[FeedbackEntry]) -> dict[str, str]:
    """Feedback id → the mistaken agent annotated on the run it corrects (where there is one)."""
    agents = runs.dropna(subset=["mistake_agent"]).set_index("record_id")["mistake_agent"]
    return {
        f.id: str(agents[f.decision_record_id])
        for f in feedback
        if f.decision_record_id in agents.index
    }


def write_report(report: ClusterReport, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    # streamed: the same bytes as canonical_json(report.to_json()), never all in memory at once
    return write_report_json(report.parts(), out_dir / "insights.json")
