"""A reference pairwise judge: reads the run layout, writes PreferenceEntry rows (JSONL).

Teams collect judgements like "A's answer was better than B's" from people or an LLM judge; this
small deterministic program stands in for them so the example runs offline. For each pair of
chosen trials it reads the same search cases from both trials' `cases/<id>.json` and prefers the
output that failed fewer evaluators, then the one with the higher utility score; otherwise a
tie. Subjects are `<study>/trial_<n>` (the trial's folder), the name preference evidence in a
TuningProposal looks for.

    python examples/reference_proposer/judge.py OUT/runs/STUDY --out prefs.jsonl [--trials 0 12]
    contextos-lab ingest preferences prefs.jsonl --store sqlite:///store.db   # signs them
    contextos-lab preferences prefs.jsonl                                     # win rates

By default it judges the baseline, every outside-proposed trial and the three best feasible
trials on the target, on up to `--cases` evenly spaced cases per pair.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

CRITERION = "correctness"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def default_trials(study_dir: Path, best: int = 3) -> list[int]:
    """Baseline, outside proposals and the `best` feasible trials on the study's target."""
    target = load(study_dir / "study.json")["target"]
    sign = 1.0 if target["direction"] == "increase" else -1.0
    chosen, feasible = [], []
    for folder in sorted(study_dir.glob("trial_*"), key=lambda p: int(p.name.split("_")[1])):
        config, scores = load(folder / "config.json"), load(folder / "scores.json")
        n = int(config["trial"])
        if config.get("is_baseline") or (config.get("proposer") or {}).get("kind") == "outside":
            chosen.append(n)
        elif scores.get("feasible") and scores.get("scores"):
            feasible.append((-sign * scores["scores"][target["metric"]], n))
    chosen += [n for _, n in sorted(feasible)[:best]]
    return sorted(set(chosen))


def verdict(a: dict[str, Any], b: dict[str, Any]) -> str:
    """`a`, `b` or `tie`: fewer failed evaluators wins, then the higher utility score."""
    if len(a["failed"]) != len(b["failed"]):
        return "a" if len(a["failed"]) < len(b["failed"]) else "b"
    ua, ub = a["scores"].get("utility"), b["scores"].get("utility")
    if ua is not None and ub is not None and ua != ub:
        return "a" if ua > ub else "b"
    return "tie"


def judge(
    study_dir: Path,
    trials: list[int] | None = None,
    *,
    cases: int = 40,
    by: str = "reference-judge",
) -> list[dict[str, Any]]:
    """PreferenceEntry rows (unsigned; the store signs them on ingest) for every trial pair."""
    study = study_dir.name
    trials = trials if trials is not None else default_trials(study_dir)
    rows = []
    for x, y in combinations(sorted(trials), 2):
        dx, dy = study_dir / f"trial_{x}" / "cases", study_dir / f"trial_{y}" / "cases"
        shared = sorted({p.name for p in dx.glob("*.json")} & {p.name for p in dy.glob("*.json")})
        step = max(1, len(shared) // cases) if shared else 1
        for name in shared[::step][:cases]:
            a, b = load(dx / name), load(dy / name)
            # judged when the later output was written: the same layout gives the same rows,
            # so re-ingesting them stores nothing twice
            at = max((dx / name).stat().st_mtime, (dy / name).stat().st_mtime)
            key = f"{study}/{x}/{y}/{a['case_id']}/{CRITERION}"
            rows.append(
                {
                    "preference_id": "pf_" + hashlib.sha256(key.encode()).hexdigest()[:10],
                    "a_id": f"trial_{x}/{a['case_id']}",
                    "b_id": f"trial_{y}/{b['case_id']}",
                    "a_subject": f"{study}/trial_{x}",
                    "b_subject": f"{study}/trial_{y}",
                    "preferred": verdict(a, b),
                    "criterion": CRITERION,
                    "signed_by": by,
                    "signed_at": datetime.fromtimestamp(at, UTC).isoformat(),
                }
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description="judge trial outputs pairwise from the run layout")
    ap.add_argument("study_dir", help="runs/<study> of a sweep's output folder")
    ap.add_argument("--out", required=True, help="preferences file to write (JSONL)")
    ap.add_argument("--trials", type=int, nargs="*", default=None)
    ap.add_argument("--cases", type=int, default=40, help="cases judged per trial pair")
    args = ap.parse_args()
    study_dir = Path(args.study_dir)
    if not (study_dir / "study.json").is_file():
        print(f"error: {study_dir} is not a run layout (no study.json)", file=sys.stderr)
        return 2
    rows = judge(study_dir, args.trials, cases=args.cases)
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} judgement(s) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
