"""Failure analysis on the real traces in ../shared/external: can a researcher trust it?

For each real dataset (tau-bench airline trajectories; Who&When Algorithm-Generated and
Hand-Crafted, where present) runs the same analysis as `contextos-lab cluster` and reports
records in / accepted / quarantined, insights, the share of failed search-split runs an insight
covers, duplicate insights, crashes, and agreement with the data's own annotations (see
`contextos_lab.insights.quality`). Then copies every dataset into two differently named folders
(with misleading words in the names) and checks that the insights are byte-identical.

    .venv/bin/python benchmarks/failure_analysis_quality.py [--external DIR]

Writes benchmarks/results/failure_analysis_quality.json (goals: duplicates, crashes,
tau_action_diff_agreement, rename_invariant).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from contextos_lab.api import (
    agent_phase_purity,
    analyse,
    coverage,
    duplicates,
    files_of,
    group_by_kind,
    load_sources,
    tau_action_diff_agreement,
    write_report,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "failure_analysis_quality.json"


def _external(arg: Path | None) -> Path:
    return arg or Path(os.environ.get("CONTEXTOS_EXTERNAL") or ROOT.parent / "shared" / "external")


def datasets(external: Path) -> dict[str, Path | None]:
    """Each Who&When subset is found by content (its records' shape), not by folder name."""
    found: dict[str, Path | None] = {
        "tau_bench_airline": external / "tau-bench",
        "who_and_when_algorithm_generated": None,
        "who_and_when_hand_crafted": None,
    }
    ww = group_by_kind([external]).get("who-and-when", [])
    for folder in sorted({p.parent for p in ww}):
        loaded = load_sources([str(folder)])
        subsets = {r.intent for r in loaded.records}
        for subset in subsets:
            found[f"who_and_when_{subset}"] = folder
    return found


def measure(name: str, folder: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    loaded = load_sources([str(folder)])
    report = analyse(loaded)
    row: dict[str, Any] = {
        "folder": folder.name,
        "files": len(files_of(folder)),
        "records_in": len(loaded.records) + len(loaded.quarantined),
        "accepted": len(loaded.records),
        "quarantined": len(loaded.quarantined),
        "failed_runs": int(report.runs["failed"].sum()),
        "heldout_runs": report.heldout.get("runs"),
        "insights": len(report.insights),
        "coverage_of_failed_search_runs": coverage(report),
        "duplicates": duplicates(report),
    }
    if name.startswith("tau"):
        row["tau_action_diff"] = tau_action_diff_agreement(report.runs)
    else:
        row["agent_phase"] = agent_phase_purity(report.runs)
        row["text_themes"] = (
            None
            if report.text is None
            else {
                "k": report.text.k,
                "decision": report.text.decision,
                **(report.text.agreement or {}),
            }
        )
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def rename_invariant(sources: list[Path]) -> bool:
    """Same files under differently named folders → byte-identical insights.json."""
    with tempfile.TemporaryDirectory() as tmp:
        outputs = []
        for label, names in (
            ("a", ("tau-bench", "Hand-Crafted")),
            ("b", ("restaurant", "handoff")),
        ):
            root = Path(tmp) / label
            for i, src in enumerate(sources):
                shutil.copytree(src, root / f"{names[i % 2]}_{i}")
            report = analyse(load_sources([str(root)]))
            outputs.append(write_report(report, Path(tmp) / f"out_{label}").read_bytes())
        return outputs[0] == outputs[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--external", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    external = _external(args.external)
    if not external.is_dir():
        print(f"error: no external data at {external} (set --external)")
        return 2
    per: dict[str, Any] = {}
    crashes = 0
    for name, folder in datasets(external).items():
        if folder is None:
            per[name] = {"status": f"absent: no such subset under {external}"}
            continue
        try:
            per[name] = measure(name, folder)
        except Exception:
            crashes += 1
            per[name] = {"status": "crashed", "traceback": traceback.format_exc()[-2000:]}
    sources = sorted({f for f in datasets(external).values() if f is not None})
    try:
        invariant = rename_invariant(sources)
    except Exception:
        crashes += 1
        invariant = False
    measured = [r for r in per.values() if "duplicates" in r]
    dup = sum(r["duplicates"] for r in measured)
    tau = per.get("tau_bench_airline", {}).get("tau_action_diff", {}).get("agreement")
    goals = {
        "duplicates": {"goal": 0, "measured": dup, "met": dup == 0},
        "crashes": {"goal": 0, "measured": crashes, "met": crashes == 0},
        "tau_action_diff_agreement": {
            "goal": ">= 0.95",
            "measured": tau,
            "met": tau is not None and tau >= 0.95,
        },
        "rename_invariant": {"goal": True, "measured": invariant, "met": invariant},
    }
    print(
        f"{'dataset':<34} {'in':>5} {'ok':>5} {'quar':>5} {'fail':>5} {'ins':>4} "
        f"{'cover':>6} {'dup':>4}  agreement"
    )
    for name, r in per.items():
        if "duplicates" not in r:
            print(f"{name:<34} {r['status']}")
            continue
        if "tau_action_diff" in r:
            a = r["tau_action_diff"]
            agreement = f"action diff {a['agree']}/{a['with_verdict']} = {a['agreement']:.3f}"
        else:
            ap_, tt = r["agent_phase"], r["text_themes"] or {}
            agreement = (
                f"agent×phase purity {ap_['purity']:.3f} ({ap_['clusters']} clusters, "
                f"{ap_['flagged_annotations']} flagged); themes k={tt.get('k')} "
                f"NMI={tt.get('nmi') if tt.get('nmi') is None else round(tt['nmi'], 3)}"
            )
        cover = r["coverage_of_failed_search_runs"]
        print(
            f"{name:<34} {r['records_in']:>5} {r['accepted']:>5} {r['quarantined']:>5} "
            f"{r['failed_runs']:>5} {r['insights']:>4} "
            f"{'-' if cover is None else f'{cover:.2f}':>6} {r['duplicates']:>4}  {agreement}"
        )
    print(f"rename invariant: {invariant}; crashes: {crashes}")
    for goal, g in goals.items():
        print(f"goal {goal}: {g['measured']} (goal {g['goal']}) {'met' if g['met'] else 'NOT met'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "failure_analysis_quality",
        "external": str(external),
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
        "datasets": per,
        "goals": goals,
    }
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
