"""Time `synthesize_insights` over 1,000,000 generated feedback entries (goal: <= 5 s, <= 2 GB).

Writes benchmarks/results/insight_synthesis.json. Peak MB is the process's peak resident set
(ru_maxrss), which includes the generated frame; tracemalloc's peak of Python allocations
during synthesis alone is reported beside it.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

from contextos_lab.harness.reference.synthetic_feedback import feedback_frame_fast
from contextos_lab.insights.synthesize import synthesize_insights

RESULT = Path(__file__).with_name("results") / "insight_synthesis.json"
GOAL_SECONDS, GOAL_MB = 5.0, 2048.0


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N timed runs")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    frame = feedback_frame_fast(args.entries, seed=0)
    generate_s = time.perf_counter() - t0
    timings = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        clusters = synthesize_insights(frame)
        timings.append(time.perf_counter() - t0)
    tracemalloc.start()
    synthesize_insights(frame)
    traced_peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    result = {
        "entries": args.entries,
        "clusters": len(clusters),
        "entries_in_clusters": sum(c.count for c in clusters),
        "seconds": round(min(timings), 3),
        "seconds_all_runs": [round(t, 3) for t in timings],
        "peak_rss_mb": round(_rss_mb(), 1),
        "tracemalloc_peak_mb": round(traced_peak_mb, 1),
        "generate_seconds": round(generate_s, 3),
        "goal": {"seconds": GOAL_SECONDS, "peak_mb": GOAL_MB},
        "meets_goal": min(timings) <= GOAL_SECONDS and _rss_mb() <= GOAL_MB,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    width = max(len(k) for k in result)
    for key in (
        "entries",
        "clusters",
        "seconds",
        "peak_rss_mb",
        "tracemalloc_peak_mb",
        "generate_seconds",
        "meets_goal",
    ):
        print(f"{key:<{width}}  {result[key]}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
