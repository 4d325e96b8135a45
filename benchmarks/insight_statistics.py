"""Only findings that hold: `cluster`'s statistics layer on the real traces in ../shared/external.

Runs the same analysis as `contextos-lab cluster` on tau-bench alone, Who&When alone and both in
one folder, and reports per run: insights shown, findings (Benjamini–Hochberg q <= 0.05 within
the source) and exploratory ones, candidate pairs overlapping by >= 80 % before the merge and
shown pairs after it, findings that do not survive an independent BH re-adjustment, and whether
each source's statistics are the same alone and beside the other source. On tau-bench it reads
every failed run's class against the stored ground-truth diff.

    .venv/bin/python benchmarks/insight_statistics.py [--external DIR]

Writes benchmarks/results/insight_statistics.json (goals: tau_class_consistent_with_diff == 1.0,
insights_overlapping_80pct == 0, insights_below_fdr_shown_as_findings == 0, and
per_source_statistics_invariant == true).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from contextos_lab.api import (  # noqa: E402
    MERGE_AT,
    SEARCH,
    ClusterReport,
    analyse,
    below_fdr_shown_as_findings,
    containment,
    load_sources,
    member_runs,
    overlapping_pairs,
    run_insight_candidates,
    tau_class_consistency,
)

OUT = REPO / "benchmarks" / "results" / "insight_statistics.json"
#: What must not move when another source's files are added (per insight id).
STATS = ("p_value", "q_value", "rate", "baseline_rate", "rate_ci95", "share_ci95", "standing")


def _external(arg: Path | None) -> Path:
    return arg or Path(os.environ.get("CONTEXTOS_EXTERNAL") or REPO.parent / "shared" / "external")


def candidate_overlaps(report: ClusterReport) -> int:
    """Run-insight candidate pairs (before the merge) of one source overlapping by >= 80 %."""
    cands = run_insight_candidates(report.runs[report.runs["split"] == SEARCH])
    return sum(
        1
        for a, b in combinations(cands, 2)
        if a.family == b.family and containment(a.members, b.members) >= MERGE_AT
    )


def measure(folder: Path) -> tuple[dict[str, Any], ClusterReport]:
    t0 = time.perf_counter()
    report = analyse(load_sources(str(folder)), text_backend=None)
    shown = list(report.insights)
    standing = [i.support.get("standing") for i in shown]
    row: dict[str, Any] = {
        "folder": str(folder),
        "insights": len(shown),
        "findings": standing.count("finding"),
        "exploratory": standing.count("exploratory"),
        "no_successful_baseline": sum(
            i.support.get("standing_reason") == "no successful baseline" for i in shown
        ),
        "merged_away": sum(len(i.support.get("merged") or ()) for i in shown),
        "candidate_pairs_overlapping_80pct": candidate_overlaps(report),
        "overlapping_80pct": overlapping_pairs(shown, member_runs(report)),
        "below_fdr_shown_as_findings": below_fdr_shown_as_findings(shown),
        "findings_shown": [
            {"pattern": i.pattern, "q_value": i.support.get("q_value")}
            for i in shown
            if i.support.get("standing") == "finding"
        ],
    }
    tau = tau_class_consistency(report.runs)
    if tau["failed_runs"]:
        row["tau_class"] = tau
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row, report


def stats_by_id(report: ClusterReport, family: str) -> dict[str, dict[str, Any]]:
    return {
        i.insight_id: {k: i.support.get(k) for k in STATS} | {"confidence": i.confidence}
        for i in report.insights
        if i.support.get("family") == family
    }


def measure_all(external: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, bool]]:
    """Per-run rows, the goals object and per-source invariance for tau-bench and Who&When
    alone and in one folder (`failure_attribution.py` imports this for the same goals)."""
    folders = {"tau_bench": external / "tau-bench", "who_and_when": external / "who-and-when"}
    if not all(f.is_dir() for f in folders.values()):
        raise FileNotFoundError(f"tau-bench and who-and-when expected under {external}")
    per: dict[str, Any] = {}
    reports: dict[str, ClusterReport] = {}
    for name, folder in {**folders, "both_in_one_folder": external}.items():
        per[name], reports[name] = measure(folder)
    both = reports["both_in_one_folder"]
    invariant = {
        family: stats_by_id(reports[name], family) == stats_by_id(both, family)
        for name, family in (("tau_bench", "tau-bench"), ("who_and_when", "who-and-when"))
    }
    tau = per["tau_bench"]["tau_class"]["share"]
    overlapping = sum(len(r["overlapping_80pct"]) for r in per.values())
    below = sum(len(r["below_fdr_shown_as_findings"]) for r in per.values())
    goals = {
        "tau_class_consistent_with_diff": {"goal": "== 1.0", "measured": tau, "met": tau == 1.0},
        "insights_overlapping_80pct": {
            "goal": 0,
            "measured": overlapping,
            "met": overlapping == 0,
        },
        "insights_below_fdr_shown_as_findings": {"goal": 0, "measured": below, "met": below == 0},
        "per_source_statistics_invariant": {
            "goal": True,
            "measured": all(invariant.values()),
            "met": all(invariant.values()),
            "per_source": invariant,
        },
    }
    return per, goals, invariant


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--external", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    external = _external(args.external)
    try:
        per, goals, invariant = measure_all(external)
    except FileNotFoundError as exc:
        print(f"error: {exc} (set --external)")
        return 2
    print(
        f"{'run':<20} {'ins':>4} {'find':>5} {'expl':>5} {'nobase':>6} {'merged':>6} "
        f"{'cand>=80%':>9} {'shown>=80%':>10} {'below-FDR':>9}"
    )
    for name, r in per.items():
        print(
            f"{name:<20} {r['insights']:>4} {r['findings']:>5} {r['exploratory']:>5} "
            f"{r['no_successful_baseline']:>6} {r['merged_away']:>6} "
            f"{r['candidate_pairs_overlapping_80pct']:>9} {len(r['overlapping_80pct']):>10} "
            f"{len(r['below_fdr_shown_as_findings']):>9}"
        )
    t = per["tau_bench"]["tau_class"]
    print(f"tau-bench class vs stored diff: {t['consistent']}/{t['failed_runs']}; {t['classes']}")
    for name, r in per.items():
        for f in r["findings_shown"]:
            print(f"  finding [{name}] q={f['q_value']:.3g}  {f['pattern']}")
    print(f"each source's statistics the same alone and beside the other: {invariant}")
    for goal, g in goals.items():
        print(f"goal {goal}: {g['measured']} (goal {g['goal']}) {'met' if g['met'] else 'NOT met'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "insight_statistics",
        "external": str(external),
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
        "runs": per,
        "goals": goals,
    }
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
