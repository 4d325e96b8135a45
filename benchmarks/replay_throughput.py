"""Replay throughput of the reference harness: one config over the 2,000-case search set.

Prints a table and writes benchmarks/results/replay_throughput.json. `cases_per_s` is the median
over several timed `run_batch` calls (after one warm-up that builds the per-set arrays); the
evaluation of the five evaluators is timed separately. Goal: >= 20,000 cases/s on 2 cores.

Run: `python benchmarks/replay_throughput.py [--repeats 15]`
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from contextos_lab.api import baseline_config, evaluate, load_replay_set, reference_harness

ROOT = Path(__file__).resolve().parents[1]
GOAL = 20_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/replay_throughput.json"
    )
    args = parser.parse_args()

    cases, manifest = load_replay_set(ROOT / "search_sets")
    harness = reference_harness()
    config = baseline_config(harness)
    t0 = time.perf_counter()
    harness.run_batch(cases, config)
    warmup_s = time.perf_counter() - t0

    batch_s, eval_s = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        results = harness.run_batch(cases, config)
        batch_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        evaluate(cases, results)
        eval_s.append(time.perf_counter() - t0)

    n = len(cases)
    cases_per_s = n / statistics.median(batch_s)
    report = {
        "benchmark": "replay_throughput",
        "harness": harness.name,
        "n_cases": n,
        "set_sha256": manifest["set_sha256"],
        "repeats": args.repeats,
        "cases_per_s": round(cases_per_s, 1),
        "cases_per_s_min": round(n / max(batch_s), 1),
        "cases_per_s_max": round(n / min(batch_s), 1),
        "batch_ms_median": round(statistics.median(batch_s) * 1000, 3),
        "evaluate_ms_median": round(statistics.median(eval_s) * 1000, 3),
        "run_and_evaluate_cases_per_s": round(
            n / (statistics.median(batch_s) + statistics.median(eval_s)), 1
        ),
        "warmup_ms": round(warmup_s * 1000, 1),
        "goals": {
            "cases_per_s": {
                "goal": f">= {GOAL}",
                "measured": round(cases_per_s, 1),
                "met": cases_per_s >= GOAL,
            }
        },
        "goal_cases_per_s": GOAL,
        "meets_goal": cases_per_s >= GOAL,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    width = max(len(k) for k in report)
    print(f"{'metric':<{width}}  value")
    print(f"{'-' * width}  {'-' * 20}")
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
