"""A reference outside proposer: reads the run layout, enqueues one change, cites its evidence.

The shape an LLM agent with shell access would follow, done by a small deterministic program:

1. read `runs/<study>/study.json` (target, surfaces) and the `scores.json` of every trial the
   sampler ran (outside proposals, its own earlier ones included, are not its evidence: the
   same layout read again proposes the same change from the same numbers);
2. take the best feasible trial on the target and its failing cases (`cases/<id>.json`);
3. find the most frequent failure among them: its signature is the evaluators the case failed
   plus the decision it made against the one it should have made;
4. across the other feasible trials, find the one-knob change (knob = value, the rest as in
   the best trial's config) under which those same cases most often do not fail that way;
5. enqueue the best trial's config with that knob changed, citing the failing cases, through
   `contextos-lab enqueue` (the same command a person uses).

    python examples/reference_proposer/propose.py SPEC --out OUT [--evaluate] [--dry-run]

It reads search-set runs only (the layout holds nothing else) and never touches the study
directly: the kit validates the change, evaluates it, and only the held-out gate can promote it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def signature(case: dict[str, Any]) -> str:
    got = case["result"].get("decision")
    want = case["case"].get("expected_decision")
    what = "+".join(case["failed"])
    return f"{what}: expected {want}, got {got}" if want is not None else what


def better(target: dict[str, Any], a: float, b: float) -> bool:
    return a > b if target["direction"] == "increase" else a < b


def propose(study_dir: Path) -> dict[str, Any] | None:
    about = load(study_dir / "study.json")
    target = about["target"]
    metric = target["metric"]
    trials = {}
    for folder in sorted(study_dir.glob("trial_*")):
        scores, config = load(folder / "scores.json"), load(folder / "config.json")
        # the sampler's trials only: an outside proposal (this one's own, read again on a
        # re-run) is evidence about itself
        if (config.get("proposer") or {}).get("kind") == "outside":
            continue
        if scores["state"] == "COMPLETE" and scores.get("scores"):
            trials[scores["trial"]] = (scores, config, folder)
    feasible = [n for n, (s, _, _) in trials.items() if s["feasible"]]
    if not feasible:
        return None
    best = feasible[0]
    for n in feasible[1:]:
        if better(target, trials[n][0]["scores"][metric], trials[best][0]["scores"][metric]):
            best = n
    scores, config, folder = trials[best]
    failing = {
        cid: load(folder / "cases" / f"{_safe(cid)}.json") for cid in scores["failing_cases"]
    }
    if not failing:
        return None
    counts = Counter(signature(c) for c in failing.values())
    worst, n_worst = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    cited = sorted(cid for cid, c in failing.items() if signature(c) == worst)
    fixes: Counter[tuple[str, Any]] = Counter()
    seen: Counter[tuple[str, Any]] = Counter()
    for other_scores, other, other_folder in trials.values():
        if not other_scores["feasible"]:  # never learn a change from a config that breaks a floor
            continue
        changed = {k: v for k, v in other["params"].items() if config["params"].get(k) != v}
        for knob, value in changed.items():
            key = (knob, json.dumps(value))
            for cid in cited:
                path = other_folder / "cases" / f"{_safe(cid)}.json"
                if not path.exists():
                    continue
                case = load(path)
                seen[key] += 1
                fixes[key] += not case["failed"] or signature(case) != worst
    if not seen:
        return None
    rate = {k: fixes[k] / seen[k] for k in seen}
    (knob, value_json), fix_rate = sorted(rate.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    value = json.loads(value_json)
    proposal = dict(config["params"])
    proposal[knob] = value
    rationale = (
        f"trial {best} (best feasible on {metric}) fails {n_worst} of its "
        f"{len(failing)} failing search cases as '{worst}'; in {seen[(knob, value_json)]} "
        f"case runs of other trials with {knob}={value!r}, {fix_rate:.0%} of those cases "
        f"avoid that failure; proposing trial {best}'s config with {knob}={value!r}"
    )
    return {
        "config": proposal,
        "rationale": rationale,
        "cites": [f"trial_{best}/{cid}" for cid in cited[:10]],
    }


def _safe(case_id: str) -> str:
    from contextos_lab.autotune.run_layout import safe_name

    return safe_name(case_id)


def main() -> int:
    ap = argparse.ArgumentParser(description="enqueue one change read from the run layout")
    ap.add_argument("spec")
    ap.add_argument("--out", required=True, help="the sweep's output folder (holds runs/)")
    ap.add_argument("--study", default=None, help="study name (default: the only one in runs/)")
    ap.add_argument("--evaluate", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="print the proposal, enqueue nothing")
    args = ap.parse_args()
    runs = Path(args.out) / "runs"
    studies = [args.study] if args.study else [p.name for p in sorted(runs.glob("*")) if p.is_dir()]
    if len(studies) != 1:
        print(f"error: name one study of {studies} with --study", file=sys.stderr)
        return 2
    found = propose(runs / studies[0])
    if found is None:
        print("no proposal: no feasible trial with failing cases and a contrasting trial")
        return 0
    print(json.dumps(found, indent=1))
    if args.dry_run:
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(found["config"], fh)
    cmd = [sys.executable, "-m", "contextos_lab.cli", "enqueue", args.spec, "--out", args.out,
           "--config", fh.name, "--by", "reference-proposer", "--rationale", found["rationale"],
           "--cites", *found["cites"]]  # fmt: skip
    if args.evaluate:
        cmd.append("--evaluate")
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
