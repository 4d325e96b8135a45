"""Post-release monitoring run every day: does the verdict stay right? (issue 42)

Simulates releases THROUGH the monitor's real code path — an experience store (SQLite in
memory, the store the kit ships), the rule's MonitorWindow, stored production scorecards,
`slices` and `monitor_window` called once per day after that day's scorecards arrive — and
scores each release as an operator running `monitor --act` daily would: the first roll back
ends the release. The old fixed-look rule (`fixed_look`, a fresh Mann–Whitney per evaluator)
is scored on the very same scorecards, once at the window's end and at every daily look.

Scores per decision (the baseline slice and the window): policy 0/1 at rate 0.97, safety 0/1
at 0.995, utility Beta(8, 2), latency lognormal around 200 ms, cost gamma with mean 0.4 c.
Scenarios: null (the release changes nothing), policy 0.97 → 0.90, policy 0.97 → 0.85,
utility −0.10. Daily arrivals are Poisson(--per-day). Nothing in the monitor knows them.
`cluster_daily_reruns_false_findings` is copied from `benchmarks/results/cluster_reruns.json`
(written by `benchmarks/cluster_reruns.py`, which drives the real ingest + `cluster --store`).

    nice -n 10 .venv/bin/python benchmarks/monitor_sequential.py [--per-day 10 --baseline 200
        --days 14 --sims 1000 --harm-sims 300 --single-sims 1000 --workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path

import numpy as np

from contextos_lab.api import (
    FIELDS,
    T0,
    ExperienceStore,
    bare_rule,
    draw,
    fixed_look_worse,
    monitor_window,
    open_window,
    scorecards,
    slices,
)

SCENARIOS = {
    "null": {},
    "policy_drop_7pts": {"policy": 0.90},
    "policy_drop_12pts": {"policy": 0.85},
    "utility_drop_10pts": {"utility_shift": -0.10},
}


def one_release(args: tuple[str, int, int, int, int]) -> dict:
    scenario, seed, per_day, n_base, days = args
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario)])
    harm = SCENARIOS[scenario]
    store = ExperienceStore("sqlite:///:memory:", signing_key=b"bench" * 8)
    r = bare_rule()
    store.append(r)
    window = open_window(store, r, days=days)
    base_scores = draw(rng, n_base)
    store.append_many(scorecards(base_scores, T0 - timedelta(days=20), timedelta(days=20), "b"))
    new_day, old_daily = None, None
    win_scores: list[dict[str, np.ndarray]] = []
    for day in range(1, days + 1):
        s = draw(rng, int(rng.poisson(per_day)), **harm)
        win_scores.append(s)
        store.append_many(
            scorecards(s, T0 + timedelta(days=day - 1), timedelta(days=1), f"d{day}_")
        )
        at = T0 + timedelta(days=day, minutes=5)
        if new_day is None:
            base, win = slices(store, window, until=at)
            v = monitor_window(r, base, win, store=store, at=at, monitor=window, rules=[])
            if v.verdict.value == "roll_back":
                new_day = day
        if old_daily is None and _old_worse(base_scores, win_scores):
            old_daily = day
    old_single = _old_worse(base_scores, win_scores)
    return {"scenario": scenario, "new": new_day, "old_daily": old_daily, "old_single": old_single}


def _old_worse(base: dict, days: list[dict]) -> bool:
    return any(
        fixed_look_worse(name, base[f], np.concatenate([d[f] for d in days]))
        for name, f in FIELDS.items()
    )


def summarise(rows: list[dict], days: int) -> dict[str, dict]:
    out = {}
    for name in SCENARIOS:
        mine = [r for r in rows if r["scenario"] == name]
        new = [r["new"] for r in mine if r["new"] is not None]
        old = [r["old_daily"] for r in mine if r["old_daily"] is not None]
        out[name] = {
            "releases": len(mine),
            "old_single_look": sum(r["old_single"] for r in mine) / len(mine),
            "old_daily_looks": len(old) / len(mine),
            "old_median_day": statistics.median(old) if old else None,
            "new_daily_looks": len(new) / len(mine),
            "new_median_day": statistics.median(new) if new else None,
            "new_by_day_14": sum(d <= days for d in new) / len(mine),
        }
    return out


def single_look_release(args: tuple[int, int, int, int]) -> bool:
    """New rule, one call at the window's end on a null release: rolled back?"""
    seed, per_day, n_base, days = args
    rng = np.random.default_rng([10_000 + seed, 0])
    store = ExperienceStore("sqlite:///:memory:", signing_key=b"bench" * 8)
    r = bare_rule()
    store.append(r)
    window = open_window(store, r, days=days)
    base = draw(rng, n_base)
    store.append_many(scorecards(base, T0 - timedelta(days=20), timedelta(days=20), "b"))
    for day in range(1, days + 1):
        s = draw(rng, int(rng.poisson(per_day)))
        store.append_many(
            scorecards(s, T0 + timedelta(days=day - 1), timedelta(days=1), f"d{day}_")
        )
    at = T0 + timedelta(days=days, minutes=5)
    b, w = slices(store, window, until=at)
    v = monitor_window(r, b, w, store=store, at=at, monitor=window, rules=[])
    return v.verdict.value == "roll_back"


def _cluster_reruns(out: Path) -> float | None:
    """`cluster_daily_reruns_false_findings` as `benchmarks/cluster_reruns.py` measured it (that
    benchmark drives the real ingest + cluster --store; it is not re-run here)."""
    path = out / "cluster_reruns.json"
    if not path.is_file():
        return None
    goal = json.loads(path.read_text())["goals"]["cluster_daily_reruns_false_findings"]
    return goal["measured"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-day", type=int, default=10)
    ap.add_argument("--baseline", type=int, default=200)
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--sims", type=int, default=1000, help="null releases")
    ap.add_argument("--harm-sims", type=int, default=300, help="releases per harm scenario")
    ap.add_argument("--single-sims", type=int, default=300, help="null releases, one look")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    a = ap.parse_args()
    started = time.time()
    jobs = [
        (name, seed, a.per_day, a.baseline, a.days)
        for name in SCENARIOS
        for seed in range(a.sims if name == "null" else a.harm_sims)
    ]
    single_jobs = [(seed, a.per_day, a.baseline, a.days) for seed in range(a.single_sims)]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(one_release, jobs, chunksize=8))
        singles = list(pool.map(single_look_release, single_jobs, chunksize=8))
    a.out.mkdir(parents=True, exist_ok=True)
    # each release's row, for a look at single releases (not a result: no goals)
    rows_file = Path(tempfile.gettempdir()) / "monitor_sequential_rows.json"
    rows_file.write_text(json.dumps(rows) + "\n")
    table = summarise(rows, a.days)
    single = sum(singles) / max(len(singles), 1)
    print(
        f"{'scenario':<20}{'old 1 look':>11}{'old daily':>10}{'old med':>8}"
        f"{'new daily':>10}{'new med':>8}"
    )
    for name, t in table.items():
        print(
            f"{name:<20}{t['old_single_look']:>11.3f}{t['old_daily_looks']:>10.3f}"
            f"{t['old_median_day'] or '-':>8}{t['new_daily_looks']:>10.3f}"
            f"{t['new_median_day'] or '-':>8}"
        )
    print(f"new rule, one look at day {a.days} (null, {a.single_sims} releases): {single:.3f}")
    goals = {
        "false_rollback_daily_looks": ("<= 0.05", table["null"]["new_daily_looks"], 0.05, "le"),
        "false_rollback_single_look": ("<= 0.05", single, 0.05, "le"),
        "power_policy_drop_7pts_14d": (
            ">= 0.75",
            table["policy_drop_7pts"]["new_by_day_14"],
            0.75,
            "ge",
        ),
        "median_detection_day_policy_drop_12pts": (
            "<= 4",
            table["policy_drop_12pts"]["new_median_day"],
            4,
            "le",
        ),
        "median_detection_day_utility_drop_10pts": (
            "<= 3",
            table["utility_drop_10pts"]["new_median_day"],
            3,
            "le",
        ),
        "cluster_daily_reruns_false_findings": ("<= 0.05", _cluster_reruns(a.out), 0.05, "le"),
    }
    result = {
        "goals": {
            k: {
                "goal": g,
                "measured": m,
                "met": m is not None and (m <= lim if op == "le" else m >= lim),
            }
            for k, (g, m, lim, op) in goals.items()
        },
        "settings": vars(a) | {"out": str(a.out)},
        "table": table,
        "seconds": round(time.time() - started, 1),
        "cpu": os.cpu_count(),
    }
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "monitor_sequential.json").write_text(json.dumps(result, indent=2) + "\n")
    for k, v in result["goals"].items():
        print(f"{k:<42} {v['goal']:>9} measured {v['measured']} met={v['met']}")


if __name__ == "__main__":
    main()
