"""Seed 000 Step 2, vectorised: corrections grouped by (decision_key, override_reason_class).

The clustering predicate is the seed's, exactly: same decision key, same reason class, at least
`min_cluster_size` entries (never below MIN_CLUSTER_SIZE = 5). One pass assigns group codes
(pandas hashing), counts with `bincount`, and splits the sorted ids at group boundaries, so the
cost stays linear in the number of entries; there is no Python loop over entries in the
grouping. Two choices the seed leaves open are fixed here and documented:
- representative_evidence_refs: the refs (seen or missing) present in at least half of the
  cluster's entries; if none reaches half, the most frequent ones (ties kept), sorted.
- representative_field_overrides: for each overridden field, its most frequent value, kept when
  at least half of the entries override that field (ties: the value seen first).
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
import pyarrow as pa

from contextos_lab.insights.findings import DEFAULT_FAMILY, Candidate, control_fdr
from contextos_lab.insights.support import Counts, support_for
from contextos_lab.schemas.base import EnvelopeList, canonical_json
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import id_pattern, new_id
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
    stamps = df["signed_at"]
    unit = getattr(stamps.dt, "unit", "ns")
    times = stamps.astype("int64").to_numpy()[keep_rows]  # epoch ticks: no Timestamp objects
    order = np.lexsort((times, kept_codes))  # by group, then time; stable for ties
    rows, g_sorted, t_sorted = keep_rows[order], kept_codes[order], times[order]
    bounds = np.flatnonzero(np.diff(g_sorted)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(g_sorted)]))
    group_codes = g_sorted[starts]
    ids = df["id"].to_numpy(dtype=object)[rows]
    keys = grouped.size().index.to_frame(index=False).iloc[group_codes].reset_index(drop=True)
    out = keys.assign(
        count=(ends - starts).astype(int),
        feedback_ids=[ids[s:e].tolist() for s, e in zip(starts, ends, strict=True)],
        earliest=pd.to_datetime(t_sorted[starts], unit=unit, utc=True),
        latest=pd.to_datetime(t_sorted[ends - 1], unit=unit, utc=True),
    )
    local = np.searchsorted(group_codes, kept_codes)  # cluster index of each kept row
    sizes_out = out["count"].to_numpy()
    out["representative_evidence_refs"] = _mode_refs(df, keep_rows, local, sizes_out)
    out["representative_field_overrides"] = _mode_overrides(df, keep_rows, local, sizes_out)
    return out[columns]


def _missing_kinds(members: pd.DataFrame) -> list[str]:
    """Evidence kinds (`kind:id` -> kind) the cluster's corrections say were missing."""
    if "evidence_refs_missing" not in members:
        return []
    kinds = {
        str(ref).split(":", 1)[0]
        for refs in members["evidence_refs_missing"]
        if refs is not None
        for ref in refs
    }
    return sorted(k for k in kinds if k)


def _mode_refs(
    df: pd.DataFrame, rows: np.ndarray, local: np.ndarray, sizes: np.ndarray
) -> list[list[str]]:
    """Refs in >= half the entries of each cluster, else the most frequent (ties kept).

    The ref lists are flattened and dictionary-encoded by Arrow (no per-entry Python); an entry
    naming a ref twice (seen and missing) counts once for it."""
    result: list[list[str]] = [[] for _ in range(len(sizes))]
    flats, owners = [], []
    for col in ("evidence_refs_seen", "evidence_refs_missing"):
        if col not in df:
            continue
        lists = pa.array(df[col].to_numpy(dtype=object)[rows], type=pa.list_(pa.string()))
        lengths = lists.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
        flats.append(lists.flatten())
        owners.append(np.repeat(np.arange(len(rows)), lengths))
    if not flats or sum(len(f) for f in flats) == 0:
        return result
    encoded = pa.concat_arrays(flats).dictionary_encode()
    ref_codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    uniques = encoded.dictionary.to_pylist()
    pairs = pd.unique(np.concatenate(owners).astype(np.int64) * len(uniques) + ref_codes)
    owner, ref_codes = pairs // len(uniques), pairs % len(uniques)
    counts = pd.DataFrame({"c": local[owner], "ref": ref_codes}).value_counts()
    counts = counts.reset_index(name="n")
    counts["half"] = counts["n"] * 2 >= sizes[counts["c"].to_numpy()]
    counts["top"] = counts["n"] == counts.groupby("c")["n"].transform("max")
    counts["keep"] = counts["half"] | (
        counts["top"] & ~counts.groupby("c")["half"].transform("any")
    )
    for c, refs in counts[counts["keep"]].groupby("c")["ref"]:
        result[int(c)] = sorted(str(uniques[r]) for r in refs)
    return result


def _override_fields(outcomes: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray, list]]:
    """(field, owning rows, value codes, decoded uniques) per overridden field.

    Arrow turns the dicts into a struct column in one pass; a field with nested values is
    keyed by canonical JSON. Dicts Arrow cannot type (one field with mixed types) fall back to
    a plain loop. A `None` override counts as no override."""
    try:
        arr = pa.array(list(outcomes))
        fo = arr.field("field_overrides") if pa.types.is_struct(arr.type) else None
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError):
        return _override_fields_loop(outcomes)
    if fo is None or not pa.types.is_struct(fo.type):
        return []
    base_valid = np.asarray(arr.is_valid()) & np.asarray(fo.is_valid())
    out = []
    for i in range(fo.type.num_fields):
        col = fo.field(i)
        valid = base_valid & np.asarray(col.is_valid())
        owner = np.flatnonzero(valid)
        if owner.size == 0:
            continue
        taken = col.take(pa.array(owner))
        if pa.types.is_nested(taken.type):
            codes, uniques = pd.factorize(pd.Series([canonical_json(v) for v in taken.to_pylist()]))
            decoded = [json.loads(u) for u in uniques]
        else:
            encoded = taken.dictionary_encode()
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            decoded = encoded.dictionary.to_pylist()
        out.append((fo.type.field(i).name, owner, np.asarray(codes), decoded))
    return out


def _override_fields_loop(outcomes: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray, list]]:
    per_field: dict[str, tuple[list[int], list[str]]] = {}
    for i, eo in enumerate(outcomes):
        fo = eo.get("field_overrides") if isinstance(eo, dict) else None
        for k, v in (fo or {}).items():
            if v is not None:
                rows_, values = per_field.setdefault(k, ([], []))
                rows_.append(i)
                values.append(canonical_json(v))
    out = []
    for k, (rows_, values) in per_field.items():
        codes, uniques = pd.factorize(pd.Series(values))
        out.append((k, np.asarray(rows_), codes, [json.loads(u) for u in uniques]))
    return out


def _mode_overrides(
    df: pd.DataFrame, rows: np.ndarray, local: np.ndarray, sizes: np.ndarray
) -> list[dict[str, Any]]:
    """Per field, the modal value (ties: the value seen first), when at least half of the
    cluster's entries override that field."""
    result: list[dict[str, Any]] = [{} for _ in range(len(sizes))]
    if "expected_outcome" not in df:
        return result
    outcomes = df["expected_outcome"].to_numpy(dtype=object)[rows]
    for name, owner, codes, decoded in _override_fields(outcomes):
        cluster = local[owner]
        entries = np.bincount(cluster, minlength=len(sizes))
        per_value = pd.DataFrame({"c": cluster, "v": codes}).value_counts().reset_index(name="n")
        per_value = per_value.sort_values(["c", "n", "v"], ascending=[True, False, True])
        best = per_value.drop_duplicates("c")
        best = best[entries[best["c"].to_numpy()] * 2 >= sizes[best["c"].to_numpy()]]
        for c, v in best[["c", "v"]].itertuples(index=False):
            result[int(c)][str(name)] = decoded[int(v)]
    return result


def _cluster_id(row: Any) -> str:
    digest = hashlib.sha256("\n".join(row.feedback_ids).encode()).hexdigest()
    seed = f"{row.decision_key}\x1f{row.override_reason_class}\x1f{digest}"
    return new_id("ins", at=row.latest.to_pydatetime(), seed=seed)


_FEEDBACK_ID = id_pattern("fb").pattern


def _build_cluster(row: Any) -> InsightCluster:
    """Validate every field through pydantic, the (possibly million) feedback ids with one
    vectorised regex, then attach them without re-validating each in Python."""
    ids = pd.Series(row.feedback_ids, dtype="string[pyarrow]")
    bad = ~ids.str.fullmatch(_FEEDBACK_ID)
    if bad.any():
        raise ValueError(f"feedback id {ids[bad].iloc[0]!r} does not have the shape fb_...")
    checked = InsightCluster(
        insight_id=_cluster_id(row),
        decision_key=row.decision_key,
        override_reason_class=row.override_reason_class,
        count=MIN_CLUSTER_SIZE,
        feedback_ids=tuple(row.feedback_ids[:1]) * MIN_CLUSTER_SIZE,
        earliest=row.earliest.to_pydatetime(),
        latest=row.latest.to_pydatetime(),
        representative_evidence_refs=tuple(row.representative_evidence_refs),
        representative_field_overrides=row.representative_field_overrides,
    )
    return checked.model_copy(
        update={"count": int(row.count), "feedback_ids": tuple(row.feedback_ids)}
    )


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
        (_build_cluster(row) for row in frame.itertuples(index=False)), InsightCluster
    )
    if store is not None and clusters:
        store.append_many(list(clusters))
    return clusters


def _insight(
    c: InsightCluster,
    confidence: float,
    support: dict[str, Any],
    members: pd.DataFrame,
    family: str | None,
    considered: int,
) -> Insight:
    """The cluster as a failure-cluster Insight, with its support and the spec that recounts
    it (`support["spec"]`)."""
    key = {"decision_key": c.decision_key, "override_reason_class": c.override_reason_class}
    return Insight(
        insight_id=new_id("ins", at=c.latest, seed=f"insight:{c.insight_id}"),
        kind=InsightKind.failure_cluster,
        intent=c.decision_key,
        pattern=f"{c.count} corrections of class {c.override_reason_class} on {c.decision_key}",
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
            "compared_with": "corrections on other decision keys",
            "family": family or DEFAULT_FAMILY,
            "spec": {"rule": "feedback_cluster", "kind": "failure_cluster", "key": key},
            "screened": {"scope": "feedback_cluster", "considered": considered},
            "key": key,
            "evidence_missing": _missing_kinds(members),
        },
    )


def insights_from_clusters(
    clusters: Sequence[InsightCluster],
    feedback: pd.DataFrame | Sequence[FeedbackEntry],
    since: datetime | None = None,
    *,
    drop_superseded: bool = True,
    family: str | None = None,
) -> EnvelopeList[Insight]:
    """Each typed cluster as a seed-001 Insight with computed support.

    Support compares the share of the cluster's reason class among corrections on its decision
    key with that share among corrections on every other key (see `support`); the clusters'
    p-values are then adjusted together (Benjamini–Hochberg, `findings.fdr`), so `confidence`
    is 1 − q. `family` names the source the feedback came from (default: one family).
    """
    df = _window(feedback_frame(feedback), since, drop_superseded)
    out: list[Insight] = []
    if df.empty:
        return EnvelopeList(out, Insight)
    start, end = df["signed_at"].min(), df["signed_at"].max()
    on_key = {k: g for k, g in df.groupby("decision_key", observed=True)}
    reason_totals = df["override_reason_class"].value_counts()
    # every (key, class) group with a member was considered; those under the minimum count in
    # the FDR family as screened out (findings.fdr)
    considered = int(df.groupby(["decision_key", "override_reason_class"], observed=True).ngroups)
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
        out.append(_insight(c, confidence, support, members, family, considered))
    held = control_fdr([Candidate(i, frozenset(i.evidence_refs)) for i in out])
    return EnvelopeList([c.insight for c in held], Insight)
