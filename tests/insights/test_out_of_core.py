"""The DuckDB path over Parquet gives the pandas path's clusters exactly (same order, ids, times,
representatives, tie-breaks), for a file or a folder, with `since` and superseded entries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.cli.app import main
from contextos_lab.harness.reference.synthetic_feedback import feedback_frame_fast
from contextos_lab.insights.out_of_core import (
    choose_engine,
    cluster_parquet,
    read_feedback_parquet,
    synthesize_parquet,
)
from contextos_lab.insights.synthesize import cluster_frame, synthesize_insights


def _plain(frame: pd.DataFrame) -> list[dict]:
    rows = frame.to_dict(orient="records")
    for r in rows:
        r["feedback_ids"] = list(r["feedback_ids"])
    return rows


def _messy(n: int, seed: int) -> pd.DataFrame:
    """Few keys (big clusters, many ties), repeated timestamps, missing overrides, extra refs,
    a string-valued override field and some entries superseded by later ones."""
    rng = np.random.default_rng(seed)
    f = feedback_frame_fast(n, seed=seed, n_keys=3, n_classes=2)
    f["signed_at"] = f["signed_at"].dt.floor("30D")  # many equal times: order falls to input
    f["expected_outcome"] = [
        {
            "terminal_state": None,
            "field_overrides": {
                "threshold": int(v) if v < 3 else None,
                "route": ["a", "b"][w] if w < 2 else None,
            },
        }
        for v, w in zip(rng.integers(0, 4, n), rng.integers(0, 3, n), strict=True)
    ]
    f["evidence_refs_missing"] = [
        [f"evidence:m{int(v)}"] if v < 2 else [] for v in rng.integers(0, 4, n)
    ]
    sup = pd.Series([None] * n, dtype="string")
    if n > 10:
        later = rng.choice(np.arange(n // 2, n), size=n // 10, replace=False)
        sup.iloc[later] = f["id"].iloc[rng.integers(0, n // 2, size=len(later))].to_numpy()
    f["supersedes"] = sup
    return f


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(0, 400),
    seed=st.integers(0, 10_000),
    m=st.sampled_from([5, 7, 40]),
    since_days=st.sampled_from([None, 20, 60]),
)
def test_duckdb_matches_pandas(tmp_path: Path, n: int, seed: int, m: int, since_days) -> None:
    path = tmp_path / f"fb_{n}_{seed}.parquet"
    _messy(n, seed).to_parquet(path)
    since = None
    if since_days is not None:
        since = (
            pd.Timestamp("2026-04-01", tz="UTC") + pd.Timedelta(days=since_days)
        ).to_pydatetime()
    expected = cluster_frame(pd.read_parquet(path), since, min_cluster_size=m)
    got = cluster_parquet(path, since, min_cluster_size=m, engine="duckdb")
    assert list(got.columns) == list(expected.columns)
    assert _plain(got) == _plain(expected)


def test_folder_of_files_and_envelopes_match(tmp_path: Path) -> None:
    frame = _messy(3000, 7)
    folder = tmp_path / "feedback"
    (folder / "b").mkdir(parents=True)
    frame.iloc[:1000].to_parquet(folder / "a.parquet")
    frame.iloc[1000:2200].to_parquet(folder / "b" / "part-0.parquet")
    frame.iloc[2200:].to_parquet(folder / "b" / "part-1.parquet")
    whole = read_feedback_parquet(folder)
    assert whole["id"].tolist() == frame["id"].tolist()  # sorted path order = input order
    expected = synthesize_insights(whole)
    got = synthesize_parquet(folder, engine="duckdb")
    assert len(expected) > 0 and list(got) == list(expected)


def test_auto_switches_on_size_and_bad_input_is_named(tmp_path: Path) -> None:
    path = tmp_path / "fb.parquet"
    feedback_frame_fast(500, seed=1).to_parquet(path)
    assert choose_engine(path, "auto") == "pandas"
    assert choose_engine(path, "auto", threshold_bytes=10) == "duckdb"
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"id": ["fb_x"]}).to_parquet(bad)
    with pytest.raises(ValueError, match=r"bad\.parquet.*decision_key"):
        cluster_parquet(bad, engine="duckdb")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no \.parquet files"):
        cluster_parquet(tmp_path / "empty", engine="duckdb")
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        cluster_parquet(tmp_path / "missing.parquet", engine="duckdb")


def test_cli_clusters_parquet_through_duckdb(tmp_path: Path, capsys) -> None:
    path = tmp_path / "fb.parquet"
    feedback_frame_fast(2000, seed=2, n_keys=4, n_classes=3).to_parquet(path)
    out = tmp_path / "out"
    assert main(["cluster", str(path), "--engine", "duckdb", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "duckdb" in printed
    stored = pd.read_json(out / "insight_clusters.jsonl", lines=True)
    expected = synthesize_insights(pd.read_parquet(path))
    assert stored["insight_id"].tolist() == [c.insight_id for c in expected]
    assert stored["count"].tolist() == [c.count for c in expected]


def test_refs_named_twice_count_once(tmp_path: Path) -> None:
    """An entry naming a ref twice in `seen`, or in both `seen` and `missing`, counts once for
    it on both paths (DuckDB dedupes without list_distinct); ids come back across files."""
    f = feedback_frame_fast(60, seed=3, n_keys=1, n_classes=2)
    rng = np.random.default_rng(3)
    f["evidence_refs_seen"] = [
        ["evidence:a", "evidence:a"] if v == 0 else ["evidence:b"] if v == 1 else []
        for v in rng.integers(0, 3, len(f))
    ]
    f["evidence_refs_missing"] = [
        ["evidence:a", "evidence:c", "evidence:c"] if v else [] for v in rng.integers(0, 2, len(f))
    ]
    (tmp_path / "in").mkdir()
    f.iloc[:25].to_parquet(tmp_path / "in" / "a.parquet")
    f.iloc[25:].to_parquet(tmp_path / "in" / "b.parquet")
    expected = cluster_frame(f, min_cluster_size=5)
    got = cluster_parquet(tmp_path / "in", min_cluster_size=5, engine="duckdb")
    assert len(expected) > 0
    assert _plain(got) == _plain(expected)
