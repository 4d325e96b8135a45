"""The result cache on a real PostgreSQL server (tests/conftest.py starts it): writer processes
storing overlapping keys at once keep exactly one row per key, full 32-bit seeds included."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from contextos_lab.harness.result_cache import ResultCache

pytestmark = pytest.mark.postgres


def _row(i: int, writer: int) -> dict:
    return {"key": f"k{i:04d}", "harness": "h", "harness_version": "v1", "config_hash": "c",
            "case_hash": f"case{i}", "repeat": 0, "seed": 4_000_000_000 + i,
            "result": {"case_id": f"c{i}", "writer": writer}}  # fmt: skip


def _write(url: str, writer: int) -> None:
    cache = ResultCache(url)
    for start in range(0, 60, 10):  # overlapping batches: every writer stores every key
        cache.put_many([_row(i, writer) for i in range(start, start + 10)])


def test_concurrent_writers_keep_one_row_per_key(postgres_db: str) -> None:
    url = postgres_db.replace("postgresql+psycopg://", "postgresql://")
    spawn = mp.get_context("spawn")
    procs = [spawn.Process(target=_write, args=(url, w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = ResultCache(url)
    assert cache.count() == 60
    got = cache.get_many([f"k{i:04d}" for i in range(60)])
    assert len(got) == 60 and {g["writer"] for g in got.values()} <= {0, 1, 2}
