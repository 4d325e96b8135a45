"""How a trial's cases run: concurrently, k times each, with seeds, timeouts and a cache.

`execute` is the one place a config meets a case set. It
- looks every (case, repeat) up in the result cache first and runs only what is missing;
- runs the rest on at most `max_concurrency` threads: one case per task for a harness that
  answers one case (`run`), one chunk per task for a batch harness (`run_batch`; a subprocess
  harness starts one process per chunk);
- gives every case a deadline (`case_timeout_s`): a case that hangs or raises becomes an error
  row with the reason, never an exception out of the trial;
- hands each (case, repeat) a recorded seed derived from (spec seed, config, case, repeat) to
  `run(..., seed=)` / `run_batch(..., seeds=)`;
- stores what succeeded (errors are not cached: the next run retries them).

What a harness declares (version, concurrency, batching, deadlines) is read from
`BaseHarness` members (`harness.base`); a Protocol-only harness is wrapped once.

Rows come back case-major (case 0 repeats 0..k-1, case 1 …) with `repeat`, `seed` and
`cached` beside RunResult's columns.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.errors import EXIT_PROTOCOL, ContextosError
from contextos_lab.harness.base import BaseHarness, as_base_harness
from contextos_lab.harness.pool import run_pool
from contextos_lab.harness.protocol import RESULT_COLUMNS, Fault, Harness, RunResult
from contextos_lab.harness.result_cache import HarnessKey, ResultCache, config_hash, result_key
from contextos_lab.schemas.base import canonical_json, sha256_hex

EXTRA_COLUMNS: tuple[str, ...] = ("repeat", "seed", "cached")


class ExecutionPolicy(BaseModel):
    """The spec's execution fields: how hard to drive the harness, how often to ask."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_concurrency: int | None = Field(
        default=None, ge=1, description="cases in flight at once (None: the harness's own)"
    )
    repeats: int = Field(default=1, ge=1, le=100, description="runs per case (noisy harness)")
    case_timeout_s: float | None = Field(default=None, gt=0, description="deadline per case")
    seed: int = Field(default=0, ge=0, description="root of the per-(case, repeat) seeds")
    cache: bool = True

    def concurrency_for(self, harness: Harness | BaseHarness) -> int:
        return int(self.max_concurrency or as_base_harness(harness).max_concurrency or 1)


@dataclass(frozen=True)
class Execution:
    """What one config cost on one case set."""

    results: pd.DataFrame
    paid_calls: int
    cache_hits: int
    wall_s: float
    concurrency: int
    repeats: int

    @cached_property
    def n_errors(self) -> int:
        """Runs that errored (read several times a trial: the meter, the scores, the trial)."""
        return int(error_mask(self.results).sum())


def error_mask(results: pd.DataFrame) -> pd.Series:
    """True where a run errored: a non-empty `error`. Element-wise in Python: on the few
    dozen rows of a stage it is several times faster than `astype(str)` over the column."""
    if "error" not in results:
        return pd.Series(False, index=results.index)
    err = results["error"]
    present = err.notna().to_numpy()
    flags = [bool(p) and str(e) != "" for p, e in zip(present, err.tolist(), strict=True)]
    return pd.Series(flags, index=results.index, dtype=bool)


def harness_key(harness: Harness | BaseHarness) -> HarnessKey:
    """(name, `cache_identity()`): the declared `version`, else a hash of the harness's own
    source (or program files), so editing it still invalidates the cache."""
    base = as_base_harness(harness)
    return HarnessKey(base.name, base.cache_identity())


def case_seed(root: int, cfg_hash: str, case_hash: str, repeat: int) -> int:
    return int(sha256_hex(canonical_json([root, cfg_hash, case_hash, repeat]))[:8], 16)


def _error_row(
    case_id: str, reason: str, seed: int, timeout: float | None, fault: Fault | None = None
) -> dict[str, Any]:
    """An errored run: no latency and no cost (missing, never 0), its wall time spent."""
    return RunResult(
        case_id=case_id,
        decision="",
        output_text="",
        tokens=0,
        latency_ms=None,
        wall_ms=(timeout or 0) * 1000,
        error=reason,
        fault=fault,
    ).model_dump() | {"seed": seed}


def _cacheable(row: Mapping[str, Any]) -> dict[str, Any]:
    """RunResult's fields plus the seed, JSON-safe: a frame's NaN (a column the harness did
    not fill, like `cost_usd`) is stored as null."""
    out = {c: row.get(c) for c in (*RESULT_COLUMNS, "seed")}
    for k, v in out.items():
        if isinstance(v, float) and math.isnan(v):
            out[k] = {} if k == "attributes" else None
    return out


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _fault(exc: BaseException) -> Fault | None:
    """A harness call that raised a protocol error (exit 9) faulted every run it held."""
    protocol = isinstance(exc, ContextosError) and exc.code == EXIT_PROTOCOL
    return Fault.protocol if protocol else None


def execute(
    harness: Harness | BaseHarness,
    cases: pd.DataFrame,
    case_hashes: Sequence[str],
    config: Mapping[str, Any],
    policy: ExecutionPolicy | None = None,
    cache: ResultCache | None = None,
) -> Execution:
    """Results of every (case, repeat) of `config`, from the cache or from the harness."""
    policy = policy or ExecutionPolicy()
    t0 = time.perf_counter()
    harness = as_base_harness(harness)
    harness.describe()  # a program states its version and concurrency before keys are made
    k = policy.repeats
    ids = [str(c) for c in cases["case_id"]]
    hkey = harness_key(harness)
    cfg = config_hash(config)
    pairs = [(i, r) for i in range(len(ids)) for r in range(k)]
    keys = {p: result_key(hkey, cfg, case_hashes[p[0]], p[1]) for p in pairs}
    seeds = {p: case_seed(policy.seed, cfg, case_hashes[p[0]], p[1]) for p in pairs}
    found = cache.get_many(list(keys.values())) if cache is not None and policy.cache else {}
    rows: dict[tuple[int, int], dict[str, Any]] = {
        p: {**found[keys[p]], "cached": True} for p in pairs if keys[p] in found
    }
    todo = [p for p in pairs if p not in rows]
    concurrency = policy.concurrency_for(harness)
    fresh = _run_missing(harness, cases, ids, config, todo, seeds, policy, concurrency)
    rows.update({p: {**row, "cached": False} for p, row in fresh.items()})
    if cache is not None and fresh:
        cache.put_many(
            {
                "key": keys[p],
                "harness": hkey.name,
                "harness_version": hkey.version,
                "config_hash": cfg,
                "case_hash": case_hashes[p[0]],
                "repeat": p[1],
                "seed": seeds[p],
                "result": _cacheable(row),
            }
            for p, row in fresh.items()
            if not row.get("error")
        )
    ordered = [{**rows[p], "repeat": p[1], "seed": seeds[p]} for p in pairs]
    frame = pd.DataFrame(ordered, columns=[*RESULT_COLUMNS, *EXTRA_COLUMNS])
    errored = error_mask(frame)
    if errored.any():  # an errored run has no latency, whatever the harness reported
        frame["latency_ms"] = frame["latency_ms"].astype(float).mask(errored)
    return Execution(
        results=frame,
        paid_calls=len(todo),
        cache_hits=len(pairs) - len(todo),
        wall_s=time.perf_counter() - t0,
        concurrency=concurrency,
        repeats=k,
    )


def _run_missing(
    harness: BaseHarness,
    cases: pd.DataFrame,
    ids: list[str],
    config: Mapping[str, Any],
    todo: list[tuple[int, int]],
    seeds: Mapping[tuple[int, int], int],
    policy: ExecutionPolicy,
    concurrency: int,
) -> dict[tuple[int, int], dict[str, Any]]:
    if not todo:
        return {}
    timeout = policy.case_timeout_s
    chunks: list[list[tuple[int, int]]]
    if harness.batched:
        chunks = _chunks(todo, concurrency, harness.per_process_concurrency)
        tasks = [_batch_task(harness, cases, config, c, seeds, timeout) for c in chunks]
        timeouts = [
            None if timeout is None else harness.batch_deadline_s(len(c), timeout) for c in chunks
        ]
    else:
        chunks = [[p] for p in todo]
        records = cases.to_dict(orient="records")
        tasks = [_case_task(harness, records[p[0]], config, seeds[p]) for p in todo]
        timeouts = [timeout] * len(tasks)
    outcomes = run_pool(tasks, concurrency, timeouts)
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for chunk, outcome in zip(chunks, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            for p in chunk:
                reason, fault = _reason(outcome), _fault(outcome)
                out[p] = _error_row(ids[p[0]], reason, seeds[p], timeout, fault)
            continue
        for p, row in zip(chunk, outcome, strict=True):
            out[p] = {**row, "case_id": ids[p[0]]}
    return out


def _chunks(
    todo: list[tuple[int, int]], concurrency: int, per_chunk: int
) -> list[list[tuple[int, int]]]:
    """One chunk per repeat when sequential; else `concurrency / per_chunk` contiguous chunks
    per repeat (a repeat never shares a chunk with another: case ids stay unique in a batch)."""
    by_repeat: dict[int, list[tuple[int, int]]] = {}
    for p in todo:
        by_repeat.setdefault(p[1], []).append(p)
    parts = max(1, concurrency // max(per_chunk, 1))
    out: list[list[tuple[int, int]]] = []
    for group in by_repeat.values():
        size = math.ceil(len(group) / min(parts, len(group)))
        out.extend(group[i : i + size] for i in range(0, len(group), size))
    return out


def _case_task(
    harness: BaseHarness, case: Mapping[str, Any], config: Mapping[str, Any], seed: int
) -> Any:
    def task() -> list[dict[str, Any]]:
        return [{**harness.run(case, config, seed=seed).model_dump(), "seed": seed}]

    return task


def _batch_task(
    harness: BaseHarness,
    cases: pd.DataFrame,
    config: Mapping[str, Any],
    chunk: list[tuple[int, int]],
    seeds: Mapping[tuple[int, int], int],
    timeout: float | None,
) -> Any:
    def task() -> list[dict[str, Any]]:
        sub = cases.iloc[[p[0] for p in chunk]].reset_index(drop=True)
        chunk_seeds = [seeds[p] for p in chunk]
        frame = harness.run_batch(sub, config, seeds=chunk_seeds, case_timeout_s=timeout)
        records = frame.to_dict(orient="records")
        if len(records) != len(chunk):
            raise RuntimeError(f"batch answered {len(records)} of {len(chunk)} cases")
        return [{**r, "seed": s} for r, s in zip(records, chunk_seeds, strict=True)]

    return task
