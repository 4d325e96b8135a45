"""Typed feedback clusters over Parquet through DuckDB, for feedback sets larger than memory.

The pandas path (`synthesize.cluster_frame`) holds every entry as Python objects: 1M entries
peak near 1.6 GB, so tens of millions do not fit. Here DuckDB scans the Parquet file (or a
folder of files) column by column, spills to a temp folder past `memory_limit`, and computes
counts, windows and representatives in SQL; the ids come back as one Arrow list per cluster
(`parquet_ids`), never one Python object per entry. 50M entries: benchmarks/insight_synthesis.py.

The result is the pandas path's, exactly (tests/insights/test_out_of_core.py): the same clusters
in the same order, ids ordered by time then input order (files in sorted path order, rows in
file order), the same representative refs and field overrides with the same tie-breaks.
`engine="auto"` picks DuckDB when the input is larger than `DUCKDB_THRESHOLD_BYTES` on disk.
"""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from contextos_lab.insights.parquet_ids import (
    FILE_STRIDE,
    cluster_id_lists,
    file_starts,
    row_index,
)
from contextos_lab.insights.synthesize import (
    KEYS,
    _build_cluster,
    check_min_cluster_size,
    cluster_frame,
)
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, InsightCluster

Engine = Literal["auto", "duckdb", "pandas"]
#: Parquet on disk past which `auto` uses DuckDB (≈1M entries as written by the kit is ~40 MB).
DUCKDB_THRESHOLD_BYTES = 256 * 1024**2
REQUIRED = ("id", "decision_key", "override_reason_class", "signed_at")
COLUMNS = [
    *KEYS,
    "count",
    "feedback_ids",
    "earliest",
    "latest",
    "representative_evidence_refs",
    "representative_field_overrides",
]


def parquet_files(source: str | Path) -> list[Path]:
    """The Parquet files of `source` (a file, or a folder searched recursively), sorted."""
    path = Path(source)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if p.is_file())
        if not files:
            raise FileNotFoundError(f"{path}: no .parquet files in this folder")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return [path]


def choose_engine(
    source: str | Path, engine: Engine = "auto", threshold_bytes: int = DUCKDB_THRESHOLD_BYTES
) -> Literal["duckdb", "pandas"]:
    if engine != "auto":
        return engine
    size = sum(f.stat().st_size for f in parquet_files(source))
    return "duckdb" if size > threshold_bytes else "pandas"


def read_feedback_parquet(source: str | Path) -> pd.DataFrame:
    """The pandas path's input: every file, in sorted path order, concatenated."""
    frames = [pd.read_parquet(f) for f in parquet_files(source)]
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def cluster_parquet(
    source: str | Path,
    since: datetime | None = None,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    drop_superseded: bool = True,
    engine: Engine = "auto",
    threshold_bytes: int = DUCKDB_THRESHOLD_BYTES,
    memory_limit: str = "2GB",
    threads: int | None = None,
) -> pd.DataFrame:
    """`synthesize.cluster_frame` over Parquet; on DuckDB `feedback_ids` is an Arrow list."""
    m = check_min_cluster_size(min_cluster_size)
    if choose_engine(source, engine, threshold_bytes) == "pandas":
        return cluster_frame(
            read_feedback_parquet(source),
            since,
            min_cluster_size=m,
            drop_superseded=drop_superseded,
        )
    import duckdb

    files = [str(f) for f in parquet_files(source)]
    starts = file_starts(files)
    with tempfile.TemporaryDirectory(prefix="ctx-duckdb-") as spill:
        con = duckdb.connect(
            config={
                "memory_limit": memory_limit,
                "temp_directory": spill,
                "preserve_insertion_order": False,
            }
        )
        try:
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            con.execute("SET TimeZone = 'UTC'")
            out, positions = _clusters(con, files, starts, since, m, drop_superseded)
        finally:
            con.close()  # its memory is free before the ids are read
    if out.empty:
        return pd.DataFrame(columns=COLUMNS)
    ids = cluster_id_lists(files, starts, positions, out["count"].to_numpy())
    out["feedback_ids"] = pd.Series(pd.arrays.ArrowExtensionArray(ids), index=out.index)
    return out[COLUMNS]


def synthesize_parquet(
    source: str | Path,
    since: datetime | None = None,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    drop_superseded: bool = True,
    engine: Engine = "auto",
    threshold_bytes: int = DUCKDB_THRESHOLD_BYTES,
    store: Any | None = None,
) -> EnvelopeList[InsightCluster]:
    """`synthesize.synthesize_insights` over Parquet (same clusters, same ids)."""
    frame = cluster_parquet(
        source,
        since,
        min_cluster_size=min_cluster_size,
        drop_superseded=drop_superseded,
        engine=engine,
        threshold_bytes=threshold_bytes,
    )
    frame = frame.assign(feedback_ids=[list(ids) for ids in frame["feedback_ids"]])
    clusters = EnvelopeList(
        (_build_cluster(r) for r in frame.itertuples(index=False)), InsightCluster
    )
    if store is not None and clusters:
        store.append_many(list(clusters))
    return clusters


# -- the DuckDB queries ----------------------------------------------------------------------


def _lit(text: str) -> str:
    """A SQL string literal (DDL cannot take prepared parameters)."""
    return "'" + text.replace("'", "''") + "'"


def _columns(con: Any, files: list[str]) -> dict[str, str]:
    rows = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [files]).fetchall()
    types = {r[0]: r[1] for r in rows}
    missing = [c for c in REQUIRED if c not in types]
    if missing:
        raise ValueError(f"{files[0]}: feedback Parquet lacks column(s) {', '.join(missing)}")
    return types


def _window_view(
    con: Any, files: list[str], types: dict[str, str], since: datetime | None, drop: bool
) -> str:
    """The name of a view of the entries in the window: `raw` (the scan from `since`, with
    each entry's position), or `win` when superseded entries are dropped."""
    opt = {
        c: c if c in types else f"NULL AS {c}"
        for c in ("supersedes", "evidence_refs_seen", "evidence_refs_missing", "expected_outcome")
    }
    where = f"signed_at >= {_lit(pd.Timestamp(since).isoformat())}::TIMESTAMPTZ" if since else ""
    listed = "[" + ", ".join(_lit(f) for f in files) + "]"
    con.execute(
        f"""CREATE TEMP VIEW raw AS SELECT id, decision_key, override_reason_class, signed_at,
                {opt["supersedes"]}, {opt["evidence_refs_seen"]}, {opt["evidence_refs_missing"]},
                {opt["expected_outcome"]},
                (list_position({listed}, filename) - 1)::BIGINT * {FILE_STRIDE}
                    + file_row_number AS pos
            FROM read_parquet({listed}, filename = true, file_row_number = true)
            {"WHERE " + where if where else ""}"""
    )
    if drop and "supersedes" in types:  # the superseded ids: one small table, then anti-joined
        con.execute(
            "CREATE TEMP TABLE sup AS SELECT DISTINCT supersedes::VARCHAR AS id FROM raw "
            "WHERE supersedes IS NOT NULL"
        )
        if con.execute("SELECT count(*) FROM sup").fetchone()[0]:
            con.execute("CREATE TEMP VIEW win AS SELECT * FROM raw ANTI JOIN sup USING (id)")
            return "win"
    return "raw"


def _clusters(
    con: Any,
    files: list[str],
    starts: np.ndarray,
    since: datetime | None,
    m: int,
    drop: bool,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Counts, windows and representatives by SQL over views of the Parquet scan (nothing
    per entry is materialised), and the kept entries' row positions in output order (cluster,
    time, input order) for `parquet_ids.cluster_id_lists`."""
    types = _columns(con, files)
    win = _window_view(con, files, types, since, drop)
    con.execute(
        f"""CREATE TEMP TABLE cl AS SELECT *,
                row_number() OVER (ORDER BY decision_key, override_reason_class) - 1 AS cid
            FROM (SELECT decision_key, override_reason_class, count(*) AS n,
                         min(signed_at) AS earliest, max(signed_at) AS latest
                  FROM {win} GROUP BY decision_key, override_reason_class
                  HAVING count(*) >= {m})"""
    )
    con.execute(
        f"""CREATE TEMP VIEW kept AS SELECT cl.cid, cl.n, {win}.* EXCLUDE (decision_key,
                override_reason_class, supersedes)
            FROM {win} JOIN cl USING (decision_key, override_reason_class)"""
    )
    out = (
        con.sql(
            """SELECT decision_key, override_reason_class, n AS count, earliest, latest
               FROM cl ORDER BY cid"""
        )
        .to_arrow_table()
        .to_pandas()
    )
    if out.empty:
        return out, np.empty(0, dtype=np.int64)
    for col in ("earliest", "latest"):
        out[col] = pd.to_datetime(out[col], utc=True)
    sizes = out["count"].to_numpy()
    out["representative_evidence_refs"] = _refs(con, sizes)
    out["representative_field_overrides"] = _overrides(con, types, sizes)
    reader = con.sql("SELECT pos FROM kept ORDER BY cid, signed_at, pos").to_arrow_reader(1_000_000)
    return out, row_index(reader, int(sizes.sum()), starts)


def _refs(con: Any, sizes: Any) -> list[list[str]]:
    """Refs in >= half the cluster's entries, else the most frequent (ties kept), sorted."""
    # An entry naming a ref twice counts once: a seen ref at its first place in `seen`, a
    # missing one at its first place in `missing` and only if not seen. Two unnests instead of
    # `list_distinct(list_concat(seen, missing))`, which cost twice as much (hashing and
    # copying every entry's lists; most entries miss nothing).
    rows = con.execute(
        """WITH per AS (
              SELECT cid, n, ref, count(*) AS hits FROM (
                SELECT cid, n, unnest(list_filter(evidence_refs_seen,
                    lambda x, i: list_position(evidence_refs_seen, x) = i)) AS ref
                FROM kept
                UNION ALL
                SELECT cid, n, unnest(list_filter(evidence_refs_missing,
                    lambda x, i: list_position(evidence_refs_missing, x) = i
                                 AND NOT list_contains(coalesce(evidence_refs_seen, []), x)))
                FROM kept WHERE len(evidence_refs_missing) > 0) GROUP BY ALL),
           marked AS (SELECT *, hits * 2 >= n AS half,
                hits = max(hits) OVER (PARTITION BY cid) AS top,
                bool_or(hits * 2 >= n) OVER (PARTITION BY cid) AS any_half FROM per)
           SELECT cid, ref FROM marked WHERE half OR (top AND NOT any_half)"""
    ).fetchall()
    result: list[list[str]] = [[] for _ in range(len(sizes))]
    for cid, ref in rows:
        result[int(cid)].append(str(ref))
    return [sorted(r) for r in result]


def _override_fields(types: dict[str, str]) -> list[str]:
    """Names of the `expected_outcome.field_overrides` struct's fields (scalar ones only)."""
    kind = types.get("expected_outcome", "")
    marker = "field_overrides STRUCT("
    if marker not in kind:
        return []
    inner, depth, fields, token = kind.split(marker, 1)[1], 0, [], ""
    for ch in inner:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                fields.append(token)
                break
            depth -= 1
        if ch == "," and depth == 0:
            fields.append(token)
            token = ""
        else:
            token += ch
    names = []
    for f in fields:
        name, _, ftype = f.strip().partition(" ")
        if any(t in ftype for t in ("STRUCT", "[]", "MAP")):
            raise ValueError(
                f"field override {name!r} has nested values ({ftype}); "
                "use engine='pandas' for such feedback"
            )
        names.append(name.strip('"'))
    return names


def _overrides(con: Any, types: dict[str, str], sizes: Any) -> list[dict[str, Any]]:
    """Per field, the modal value (ties: the value seen first among kept entries), kept when at
    least half of the cluster's entries override that field."""
    result: list[dict[str, Any]] = [{} for _ in range(len(sizes))]
    for name in _override_fields(types):
        quoted = '"' + name.replace('"', '""') + '"'
        rows = con.execute(
            f"""WITH v AS (SELECT cid, n, pos, expected_outcome.field_overrides.{quoted} AS v
                    FROM kept WHERE expected_outcome.field_overrides.{quoted} IS NOT NULL),
               firsts AS (SELECT v, min(pos) AS first FROM v GROUP BY v),
               per AS (SELECT cid, n, v, count(*) AS hits FROM v GROUP BY ALL),
               entries AS (SELECT cid, sum(hits) AS e FROM per GROUP BY cid)
            SELECT cid, arg_min(per.v, [-hits, first]) FROM per JOIN firsts USING (v)
            JOIN entries USING (cid) WHERE e * 2 >= n GROUP BY cid"""
        ).fetchall()
        for cid, value in rows:
            result[int(cid)][name] = value
    return result
