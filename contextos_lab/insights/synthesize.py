"""Seed 000 Step 2, vectorised: corrections grouped by (decision_key, override_reason_class).

The clustering predicate is the seed's, exactly: same decision key, same reason class, at least
`min_cluster_size` entries (never below MIN_CLUSTER_SIZE = 5). One pass assigns group codes
(pandas hashing), counts with `bincount`, and splits the sorted ids at group boundaries, so the
cost stays linear in the number of entries; there is no Python loop over entries in the
grouping. Two choices the seed leaves open are fixed here and documented:
- representative_evidence_refs: the refs (seen or missing) present in at least half of the
  cluster's entries; if none reaches half, the most frequent ones (ties kept), sorted.
- representative_field_overrides: for each overridden field, its most frequent value, kept when
  at least half of the entries override that field (ties: the smallest canonical JSON).
Entries superseded by a later entry in the same input are left out (their correction counts
instead), unless `drop_superseded=False`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.insights.support import Counts, support_for
from contextos_lab.schemas.base import EnvelopeList, canonical_json
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, Insight, InsightCluster, InsightKind

KEYS = ["decision_key", "override_reason_class"]
RULE = (
    "typed feedback cluster: entries with the same decision_key and override_reason_class, "
    "kept when count >= min_cluster_size"
)


def check_min_cluster_size(value: int) -> int:
    """Seed 000: "Tune up, never down." A smaller value would call judgment calls patterns."""
    if int(value) < MIN_CLUSTER_SIZE:
        raise ValueError(
            f"min_cluster_size={value} is below MIN_CLUSTER_SIZE={MIN_CLUSTER_SIZE}; "
            "the knob may be raised, never lowered"
        )
    return int(value)


def feedback_frame(feedback: pd.DataFrame | Sequence[FeedbackEntry]) -> pd.DataFrame:
    if isinstance(feedback, pd.DataFrame):
        return feedback
    return EnvelopeList(feedback, FeedbackEntry).to_frame()


def _window(frame: pd.DataFrame, since: datetime | None, drop_superseded: bool) -> pd.DataFrame:
    if since is not None:
        frame = frame[frame["signed_at"] >= pd.Timestamp(since)]
    if drop_superseded and "supersedes" in frame and frame["supersedes"].notna().any():
        frame = frame[~frame["id"].isin(frame["supersedes"].dropna())]
    return frame


def cluster_frame(
    feedback: pd.DataFrame | Sequence[FeedbackEntry],
    since: datetime | None = None,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    drop_superseded: bool = True,
) -> pd.DataFrame:
    """One row per kept cluster: keys, count, feedback_ids, earliest, latest, representatives."""
    m = check_min_cluster_size(min_cluster_size)
    df = _window(feedback_frame(feedback), since, drop_superseded)
    columns = [
        *KEYS,
        "count",
        "feedback_ids",
        "earliest",
        "latest",
        "representative_evidence_refs",
        "representative_field_overrides",
    ]
    if df.empty:
        return pd.DataFrame(columns=columns)
    grouped = df.groupby(KEYS, sort=True, observed=True, dropna=False)
    codes = grouped.ngroup().to_numpy()
    sizes = np.bincount(codes)
    keep_rows = np.flatnonzero(sizes[codes] >= m)
    if keep_rows.size == 0:
        return pd.DataFrame(columns=columns)
    kept_codes = codes[keep_rows]
    times = df["signed_at"].to_numpy()[keep_rows]
    order = np.lexsort((times, kept_codes))  # by group, then time; stable for ties
    rows, g_sorted = keep_rows[order], kept_codes[order]
    bounds = np.flatnonzero(np.diff(g_sorted)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(g_sorted)]))
    group_codes = g_sorted[starts]
    ids = df["id"].to_numpy(dtype=object)[rows]
    sorted_times = df["signed_at"].to_numpy()[rows]
    keys = grouped.size().index.to_frame(index=False).iloc[group_codes].reset_index(drop=True)
    out = keys.assign(
        count=(ends - starts).astype(int),
        feedback_ids=[ids[s:e].tolist() for s, e in zip(starts, ends, strict=True)],
        earliest=pd.to_datetime(sorted_times[starts], utc=True),
        latest=pd.to_datetime(sorted_times[ends - 1], utc=True),
    )
    local = pd.Series(np.searchsorted(group_codes, kept_codes), index=keep_rows)
    out["representative_evidence_refs"] = _mode_refs(df, local, out["count"].to_numpy())
    out["representative_field_overrides"] = _mode_overrides(df, local, out["count"].to_numpy())
    return out[columns]


def _mode_refs(df: pd.DataFrame, local: pd.Series, sizes: np.ndarray) -> list[list[str]]:
    """Refs in >= half the entries of each cluster, else the most frequent (explode+count)."""
    rows = local.index.to_numpy()
    parts = []
    for col in ("evidence_refs_seen", "evidence_refs_missing"):
        if col in df:
            parts.append(pd.DataFrame({"c": local.to_numpy(), "ref": df[col].to_numpy()[rows]}))
    result: list[list[str]] = [[] for _ in range(len(sizes))]
    if not parts:
        return result
    exploded = pd.concat(parts, ignore_index=True).explode("ref").dropna()
    if exploded.empty:
        return result
    # An entry naming a ref twice (seen and missing) counts once for that ref.
    exploded = exploded.assign(row=np.tile(np.arange(len(rows)), len(parts))[exploded.index])
    counts = exploded.drop_duplicates(["row", "ref"]).groupby(["c", "ref"]).size()
    counts = counts.reset_index(name="n")
    counts["half"] = counts["n"] * 2 >= sizes[counts["c"].to_numpy()]
    counts["top"] = counts["n"] == counts.groupby("c")["n"].transform("max")
    counts["keep"] = counts["half"] | (
        counts["top"] & ~counts.groupby("c")["half"].transform("any")
    )
    for c, refs in counts[counts["keep"]].groupby("c")["ref"]:
        result[int(c)] = sorted(str(r) for r in refs)
    return result


def _mode_overrides(df: pd.DataFrame, local: pd.Series, sizes: np.ndarray) -> list[dict]:
    """Per field, the modal value, when at least half the entries override that field."""
    result: list[dict[str, Any]] = [{} for _ in range(len(sizes))]
    if "expected_outcome" not in df:
        return result
    outcomes = df["expected_outcome"].to_numpy(dtype=object)[local.index.to_numpy()]
    codes = local.to_numpy()
    triples = [
        (c, k, canonical_json(v))
        for c, eo in zip(codes, outcomes, strict=True)
        if isinstance(eo, dict)
        for k, v in (eo.get("field_overrides") or {}).items()
    ]
    if not triples:
        return result
    frame = pd.DataFrame(triples, columns=["c", "field", "value"])
    per_value = frame.groupby(["c", "field", "value"]).size().reset_index(name="n")
    per_value = per_value.sort_values(
        ["c", "field", "n", "value"], ascending=[True, True, False, True]
    )
    best = per_value.drop_duplicates(["c", "field"])
    per_field = frame.groupby(["c", "field"]).size().rename("entries").reset_index()
    best = best.merge(per_field, on=["c", "field"])
    best = best[best["entries"] * 2 >= sizes[best["c"].to_numpy()]]
    for row in best.itertuples(index=False):
        result[int(row.c)][str(row.field)] = json.loads(row.value)
    return result


def _cluster_id(row: Any) -> str:
    digest = hashlib.sha256("\n".join(row.feedback_ids).encode()).hexdigest()
    seed = f"{row.decision_key}\x1f{row.override_reason_class}\x1f{digest}"
    return new_id("ins", at=row.latest.to_pydatetime(), seed=seed)


def synthesize_insights(
    feedback: pd.DataFrame | Sequence[FeedbackEntry],
    since: datetime | None = None,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    drop_superseded: bool = True,
    store: Any | None = None,
) -> EnvelopeList[InsightCluster]:
    """InsightClusters over the feedback; with `store`, appended there (upstream = feedback ids,
    so the store records the upstream hash). Ids are derived from the cluster's content, so a
    re-run on the same feedback yields the same ids and the store reports them unchanged."""
    frame = cluster_frame(
        feedback, since, min_cluster_size=min_cluster_size, drop_superseded=drop_superseded
    )
    clusters = EnvelopeList(
        (
            InsightCluster(
                insight_id=_cluster_id(row),
                decision_key=row.decision_key,
                override_reason_class=row.override_reason_class,
                count=row.count,
                feedback_ids=tuple(row.feedback_ids),
                earliest=row.earliest.to_pydatetime(),
                latest=row.latest.to_pydatetime(),
                representative_evidence_refs=tuple(row.representative_evidence_refs),
                representative_field_overrides=row.representative_field_overrides,
            )
            for row in frame.itertuples(index=False)
        ),
        InsightCluster,
    )
    if store is not None and clusters:
        store.append_many(list(clusters))
    return clusters


def insights_from_clusters(
    clusters: Sequence[InsightCluster],
    feedback: pd.DataFrame | Sequence[FeedbackEntry],
    since: datetime | None = None,
    *,
    drop_superseded: bool = True,
) -> EnvelopeList[Insight]:
    """Each typed cluster as a seed-001 Insight with computed support.

    Support compares the share of the cluster's reason class among corrections on its decision
    key with that share among corrections on every other key (see `support`).
    """
    df = _window(feedback_frame(feedback), since, drop_superseded)
    out: list[Insight] = []
    if df.empty:
        return EnvelopeList(out, Insight)
    start, end = df["signed_at"].min(), df["signed_at"].max()
    on_key = {k: g for k, g in df.groupby("decision_key", observed=True)}
    reason_totals = df["override_reason_class"].value_counts()
    for c in clusters:
        same_key = on_key.get(c.decision_key, df.iloc[0:0])
        in_key = len(same_key)
        hits_in = int((same_key["override_reason_class"] == c.override_reason_class).sum())
        counts = Counts(
            hits_in=hits_in,
            n_in=in_key,
            hits_out=int(reason_totals.get(c.override_reason_class, 0)) - hits_in,
            n_out=len(df) - in_key,
        )
        members = same_key[same_key["override_reason_class"] == c.override_reason_class]
        confidence, support = support_for(counts, members["signed_at"], start, end)
        key = {"decision_key": c.decision_key, "override_reason_class": c.override_reason_class}
        out.append(
            Insight(
                insight_id=new_id("ins", at=c.latest, seed=f"insight:{c.insight_id}"),
                kind=InsightKind.failure_cluster,
                intent=c.decision_key,
                pattern=f"{c.count} corrections of class {c.override_reason_class} "
                f"on {c.decision_key}",
                occurrences=c.count,
                first_seen=c.earliest,
                last_seen=c.latest,
                evidence_refs=(*c.representative_evidence_refs, *c.feedback_ids[:20]),
                confidence=confidence,
                support={
                    **support,
                    "rule": RULE,
                    "source": "feedback",
                    "cluster_id": c.insight_id,
                    "spec": {"rule": "feedback_cluster", "kind": "failure_cluster", "key": key},
                    "key": key,
                },
            )
        )
    return EnvelopeList(out, Insight)
