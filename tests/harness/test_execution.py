"""Concurrency, per-case timeouts, repeats with seeds, and the cache in `execute`."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pytest

from contextos_lab.harness.execution import ExecutionPolicy, execute, harness_key
from contextos_lab.harness.protocol import RunResult
from contextos_lab.harness.result_cache import ResultCache
from contextos_lab.schemas.surface import TunableSurface


class Sleepy:
    """Answers one case per call after `delay` s; `hang` cases never return, `boom` raise."""

    name = "sleepy"
    version = "1"

    def __init__(self, delay: float = 0.05, hang: Sequence[str] = (), boom: Sequence[str] = ()):
        self.delay, self.hang, self.boom = delay, set(hang), set(boom)
        self.calls = 0
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return ()

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None):
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            if case["case_id"] in self.hang:
                time.sleep(30)
            if case["case_id"] in self.boom:
                raise RuntimeError("model overloaded")
            time.sleep(self.delay)
            return RunResult(
                case_id=case["case_id"], decision=str(seed), output_text=str(config),
                tokens=10, latency_ms=self.delay * 1000, wall_ms=0,
            )  # fmt: skip
        finally:
            with self._lock:
                self.in_flight -= 1


def _cases(n: int) -> tuple[pd.DataFrame, list[str]]:
    ids = [f"c{i:02d}" for i in range(n)]
    return pd.DataFrame({"case_id": ids, "x": range(n)}), [f"h{i}" for i in ids]


def test_concurrency_keeps_case_order_and_bounds_in_flight() -> None:
    cases, hashes = _cases(16)
    h = Sleepy(delay=0.1)
    t0 = time.perf_counter()
    ex = execute(h, cases, hashes, {"k": 1}, ExecutionPolicy(max_concurrency=8))
    wall = time.perf_counter() - t0
    assert list(ex.results["case_id"]) == list(cases["case_id"])
    assert h.peak == 8
    assert wall < 16 * 0.1  # below sequential (peak in-flight above is the exact check)
    assert ex.paid_calls == 16 and ex.cache_hits == 0 and ex.n_errors == 0


def test_a_hung_or_raising_case_is_an_error_row_not_a_crash() -> None:
    cases, hashes = _cases(6)
    h = Sleepy(delay=0.01, hang=["c01"], boom=["c03"])
    t0 = time.perf_counter()
    ex = execute(h, cases, hashes, {}, ExecutionPolicy(max_concurrency=3, case_timeout_s=0.5))
    assert time.perf_counter() - t0 < 20  # a hung case is abandoned, not waited for
    err = dict(zip(ex.results["case_id"], ex.results["error"], strict=True))
    assert "no answer within 0.5s" in err["c01"]
    assert "model overloaded" in err["c03"]
    assert pd.isna(err["c00"]) and ex.n_errors == 2


def test_repeats_get_recorded_distinct_seeds_and_the_cache_never_pays_twice(
    tmp_path: Any,
) -> None:
    cases, hashes = _cases(5)
    cache = ResultCache(f"sqlite:///{tmp_path / 'study.db'}")
    policy = ExecutionPolicy(max_concurrency=4, repeats=3)
    h = Sleepy(delay=0.0, boom=["c04"])
    first = execute(h, cases, hashes, {"k": 1}, policy, cache)
    assert len(first.results) == 15 and first.paid_calls == 15
    assert list(first.results["repeat"][:3]) == [0, 1, 2]
    seeds = first.results["seed"].tolist()
    assert len(set(seeds)) == 15
    assert first.results["decision"][:12].tolist() == [str(s) for s in seeds[:12]]
    h2 = Sleepy(delay=0.0)
    again = execute(h2, cases, hashes, {"k": 1}, policy, cache)
    # errors are not cached: only the 3 errored runs of c04 are paid again
    assert again.paid_calls == 3 and again.cache_hits == 12 and h2.calls == 3
    assert again.results["seed"].tolist() == seeds
    fresh = execute(h2, cases, hashes, {"k": 1}, policy.model_copy(update={"cache": False}), cache)
    assert fresh.paid_calls == 15
    other = execute(h2, cases, hashes, {"k": 2}, policy, cache)
    assert other.paid_calls == 15


def test_a_new_harness_version_invalidates(tmp_path: Any) -> None:
    cases, hashes = _cases(3)
    cache = ResultCache(None)
    h = Sleepy(delay=0.0)
    execute(h, cases, hashes, {}, None, cache)
    h.version = "2"
    assert execute(h, cases, hashes, {}, None, cache).paid_calls == 3
    assert harness_key(h).version == "2"


def test_unversioned_harness_is_keyed_by_its_source() -> None:
    class NoVersion(Sleepy):
        version = None  # type: ignore[assignment]

    key = harness_key(NoVersion())
    assert key.version.startswith("src:")


@pytest.mark.parametrize("concurrency", [1, 4])
def test_batch_harness_chunks_keep_order(concurrency: int) -> None:
    class Batch:
        name, version = "b", "1"

        def tunable_surfaces(self) -> Sequence[TunableSurface]:
            return ()

        def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
            raise AssertionError("batch path expected")

        def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any], seeds=None):
            return pd.DataFrame(
                [
                    RunResult(case_id=c, decision=str(s), output_text="", tokens=1,
                              latency_ms=1, wall_ms=0).model_dump()
                    for c, s in zip(cases["case_id"], seeds, strict=True)
                ]
            )  # fmt: skip

    cases, hashes = _cases(10)
    ex = execute(
        Batch(), cases, hashes, {}, ExecutionPolicy(max_concurrency=concurrency, repeats=2)
    )
    assert ex.results["case_id"].tolist() == [c for c in cases["case_id"] for _ in range(2)]
    assert ex.results["decision"].tolist() == [str(s) for s in ex.results["seed"]]
