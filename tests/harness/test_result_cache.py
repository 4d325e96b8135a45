"""The result cache: keyed by harness+version, config, case hash and repeat; SQLite on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.harness.result_cache import (
    HarnessKey,
    ResultCache,
    cache_url_for,
    config_hash,
    result_key,
)

ROW = {"case_id": "c1", "decision": "yes", "output_text": "yes", "tokens": 3, "seed": 7}


def _row(key: str, **over: object) -> dict[str, object]:
    return {
        "key": key,
        "harness": "h",
        "harness_version": "1",
        "config_hash": "cfg",
        "case_hash": "case",
        "repeat": 0,
        "seed": 7,
        "result": {**ROW, **over},
    }


def test_round_trip_survives_a_new_process_handle(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    cache = ResultCache(url)
    assert cache.put_many([_row("k1")]) == 1
    again = ResultCache(url)
    assert again.get_many(["k1", "k2"]) == {"k1": ROW}


def test_first_result_wins(tmp_path: Path) -> None:
    cache = ResultCache(f"sqlite:///{tmp_path / 'c.db'}")
    cache.put_many([_row("k1")])
    assert cache.put_many([_row("k1", decision="no"), _row("k2")]) == 1
    assert cache.get_many(["k1"])["k1"]["decision"] == "yes"
    assert cache.count() == 2


def test_keys_separate_version_config_case_and_repeat() -> None:
    h1, h2 = HarnessKey("h", "1"), HarnessKey("h", "2")
    cfg = config_hash({"a": 1})
    keys = {
        result_key(h1, cfg, "x", 0),
        result_key(h2, cfg, "x", 0),
        result_key(h1, config_hash({"a": 2}), "x", 0),
        result_key(h1, cfg, "y", 0),
        result_key(h1, cfg, "x", 1),
    }
    assert len(keys) == 5
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1})


def test_memory_cache_and_urls(tmp_path: Path) -> None:
    cache = ResultCache(None)
    cache.put_many([_row("k")])
    assert cache.get_many(["k"]) == {"k": ROW}
    pg = "postgresql://u:p@localhost/db"
    assert cache_url_for(pg, None) == pg
    assert cache_url_for("memory", tmp_path) is None
    journal = tmp_path / "s.log"
    assert cache_url_for(str(journal), None) == f"sqlite:///{tmp_path / 'result_cache.db'}"
    assert cache_url_for(None, tmp_path) == f"sqlite:///{tmp_path / 'result_cache.db'}"


def test_no_cache_flag_reaches_every_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from contextos_lab.cli.app import build_parser
    from contextos_lab.harness.result_cache import NO_CACHE_ENV, cache_reads_enabled

    monkeypatch.setenv(NO_CACHE_ENV, "0")  # restored after the test
    assert cache_reads_enabled()
    for argv in (
        ["search", "s.yaml", "--out", "o", "--no-cache"],
        ["gate", "--spec", "s.yaml", "--out", "o", "--no-cache"],
        ["sweep", "s.yaml", "--out", "o", "--no-cache"],
    ):
        monkeypatch.setenv(NO_CACHE_ENV, "0")
        args = build_parser().parse_args(argv)
        assert args.no_cache and not cache_reads_enabled()  # env: notebook kernels see it too
