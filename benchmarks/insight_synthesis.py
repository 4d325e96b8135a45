"""Time insight synthesis: the pandas path at 1M entries (goal: <= 5 s, <= 2 GB) and the DuckDB
out-of-core path over Parquet at 1M, 10M and 50M entries (goal at 50M: <= 60 s, <= 4 GB peak).

Writes benchmarks/results/insight_synthesis.json. Peak MB is the process's peak resident set
(ru_maxrss). Each DuckDB size runs in its own child process so its peak is its own; the
Parquet inputs (folders of 1M-entry files) are generated once under --data (not the repo) and
reused. The DuckDB figure is the typed cluster frame (`out_of_core.cluster_parquet`) with the
ids kept in Arrow; building pydantic InsightCluster envelopes holding 50M ids is not timed.

    .venv/bin/python benchmarks/insight_synthesis.py [--duckdb-sizes 1000000,10000000,50000000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from contextos_lab.api import feedback_frame_fast, synthesize_insights  # noqa: E402

RESULT = Path(__file__).with_name("results") / "insight_synthesis.json"
GOAL_SECONDS, GOAL_MB = 5.0, 2048.0
GOAL_50M_SECONDS, GOAL_50M_MB = 60.0, 4096.0
CHUNK = 1_000_000


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def parquet_input(n: int, data: Path) -> Path:
    """A folder of Parquet files holding `n` entries with unique ids (made once, then reused)."""
    folder = data / f"feedback_{n}"
    done = folder / "_complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, n, CHUNK)):
        size = min(CHUNK, n - start)
        frame = feedback_frame_fast(size, seed=k)
        frame["id"] = [f"fb_2026_05_04_{start + i:09x}" for i in range(size)]
        frame.to_parquet(folder / f"part-{k:05d}.parquet", index=False)
    done.write_text(str(n))
    return folder


def _hwm_mb() -> float:
    """Peak RSS of this process since exec (VmHWM). ru_maxrss would start at the parent's RSS
    when it forked us, which after the pandas run is ~1.5 GB that is not ours."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return _rss_mb()


def duckdb_child(folder: Path) -> dict:
    from contextos_lab.api import cluster_parquet

    t0 = time.perf_counter()
    frame = cluster_parquet(folder, engine="duckdb", memory_limit="2GB", threads=2)
    seconds = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "seconds": round(seconds, 3),
        # CPU time (user + system, all threads): what the run costs whatever else shares the
        # cores; on 2 idle cores wall time is between half of it and all of it
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(_hwm_mb(), 1),
        "clusters": len(frame),
        "entries_in_clusters": int(frame["count"].sum()),
    }


def pandas_1m(entries: int, repeat: int) -> dict:
    t0 = time.perf_counter()
    frame = feedback_frame_fast(entries, seed=0)
    generate_s = time.perf_counter() - t0
    timings = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        clusters = synthesize_insights(frame)
        timings.append(time.perf_counter() - t0)
    return {
        "entries": entries,
        "clusters": len(clusters),
        "seconds": round(min(timings), 3),
        "seconds_all_runs": [round(t, 3) for t in timings],
        "peak_rss_mb": round(_rss_mb(), 1),
        "generate_seconds": round(generate_s, 3),
    }


def _goal(goal: float, measured: float | None) -> dict:
    return {"goal": goal, "measured": measured, "met": measured is not None and measured <= goal}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000, help="pandas path size")
    parser.add_argument("--repeat", type=int, default=3, help="pandas: best of N timed runs")
    parser.add_argument("--duckdb-sizes", default="1000000,10000000,50000000")
    parser.add_argument("--data", type=Path, default=Path("/tmp/contextos_bench_parquet"))
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    if args.child is not None:  # one DuckDB measurement in a fresh process
        print(json.dumps(duckdb_child(args.child)))
        return 0
    load_before = [round(x, 2) for x in os.getloadavg()]
    print(f"load average before: {load_before}")
    runs: dict = {"pandas": pandas_1m(args.entries, args.repeat), "duckdb": {}}
    p = runs["pandas"]
    print(
        f"pandas  {p['entries']:>11,} entries: {p['seconds']:.2f} s, {p['peak_rss_mb']:.0f} MB peak"
    )
    sizes = [int(s) for s in args.duckdb_sizes.split(",") if s]
    for n in sizes:
        folder = parquet_input(n, args.data)
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(folder)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = {
            **json.loads(done.stdout.strip().splitlines()[-1]),
            "entries": n,
            "load_average_1min_after": round(os.getloadavg()[0], 2),
        }
        runs["duckdb"][str(n)] = row
        print(
            f"duckdb  {n:>11,} entries: {row['seconds']:.2f} s ({row['cpu_seconds']:.1f} CPU s), "
            f"{row['peak_rss_mb']:.0f} MB peak, {row['clusters']} clusters "
            f"(load {row['load_average_1min_after']})"
        )
    big = runs["duckdb"].get(str(50_000_000), {})
    goals = {
        "pandas_1m_seconds": _goal(
            GOAL_SECONDS, p["seconds"] if p["entries"] == 1_000_000 else None
        ),
        "pandas_1m_peak_mb": _goal(
            GOAL_MB, p["peak_rss_mb"] if p["entries"] == 1_000_000 else None
        ),
        "duckdb_50m_seconds": _goal(GOAL_50M_SECONDS, big.get("seconds")),
        "duckdb_50m_peak_mb": _goal(GOAL_50M_MB, big.get("peak_rss_mb")),
    }
    for name, g in goals.items():
        print(f"goal {name}: {g['measured']} vs {g['goal']} -> {'met' if g['met'] else 'NOT met'}")
    result = {
        "goals": goals,
        "runs": runs,
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
