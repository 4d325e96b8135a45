"""`cluster --store` re-run daily on null feedback that accumulates: does repetition make
findings? (issue #42: `cluster_daily_reruns_false_findings`).

Each simulated history is a fresh SQLite store of the coding-agent example project. Every day
`--per-day` decisions arrive over the project's three decision keys and a `--feedback-rate`
share of them gets a correction whose reason class is drawn uniformly from three domain-free
classes, whatever the key: no pattern is real. Each day runs the real commands in-process
(`ingest decisions`, `ingest feedback`, `cluster --store --out`), and the share of histories
in which any run showed a finding is counted twice: under the rule the CLI now applies
(`insights.findings.reruns`: the error rate spent over looks) and under the per-run
Benjamini–Hochberg standing alone (`support.rerun.run_standing`, what `cluster` showed before).

    .venv/bin/python benchmarks/cluster_reruns.py [--histories 24] [--days 30] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "examples" / "coding_agent"
OUT = Path(__file__).resolve().parent / "results" / "cluster_reruns.json"
KEYS = (("code.change.merge", "code.change"), ("code.command.run", "code.command"),
        ("code.dependency.add", "code.dependency"))  # fmt: skip
CLASSES = ("evidence_missing", "policy_misapplied", "wrong_tool")
SIGNERS = ("eng_lead_ada", "sre_oncall_lin", "security_owner_kim")
T0 = datetime(2026, 10, 1, 8, tzinfo=UTC)


def day_rows(rng: np.random.Generator, h: int, day: int, per_day: int, rate: float):
    """One day's null decisions and corrections (JSON-ready dicts)."""
    decisions, feedback = [], []
    for i in range(per_day):
        n = day * per_day + i
        key, intent = KEYS[int(rng.integers(len(KEYS)))]
        at = T0 + timedelta(days=day, minutes=int(rng.integers(0, 600)))
        rid, trace = f"dr_2026_10_01_h{h}n{n}", f"trace_h{h}_{n}"
        decisions.append({
            "decided_at": at.isoformat(), "decision": "approve", "decision_key": key,
            "evidence_refs": [], "evidence_refs_missing": [], "inputs": {"n": n},
            "intent": intent, "outputs_hash": f"{n:064x}", "pack_version": None,
            "policy_version": None, "record_id": rid, "schema_version": "1.0",
            "session_id": f"sess_{h}", "status": "COMPLETED", "tool_calls": [],
            "trace_id": trace,
        })  # fmt: skip
        if rng.random() < rate:
            cls = CLASSES[int(rng.integers(len(CLASSES)))]
            feedback.append({
                "decision_key": key, "decision_record_id": rid, "evidence_refs_missing": [],
                "evidence_refs_seen": [], "expected_outcome": {}, "id": f"fb_2026_10_01_h{h}n{n}",
                "override_kind": "modify", "override_reason_class": cls,
                "override_reason_text": f"{cls.replace('_', ' ')} on {trace}",
                "signed_at": (at + timedelta(hours=1)).isoformat(),
                "signed_by": SIGNERS[int(rng.integers(len(SIGNERS)))], "trace_id": trace,
            })  # fmt: skip
    return decisions, feedback


def _cli(argv: list[str]) -> int:
    from contextos_lab.api import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    if code not in (0, 2) or (code == 2 and argv[0] == "ingest"):
        raise RuntimeError(f"{' '.join(argv[:2])} exited {code}: {err.getvalue()[-2000:]}")
    return code


def history(h: int, days: int, per_day: int, rate: float, seed: int) -> dict[str, Any]:
    """One store, `days` daily ingest + cluster runs; the first day any finding was shown."""
    rng = np.random.default_rng([seed, h])
    first_new: int | None = None
    first_old: int | None = None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        common = ["--store", f"sqlite:///{folder}/s.db", "--project", str(PROJECT)]
        for day in range(days):
            decisions, feedback = day_rows(rng, h, day, per_day, rate)
            for kind, rows in (("decisions", decisions), ("feedback", feedback)):
                path = folder / f"{kind}_{day}.jsonl"
                path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
                code = _cli(["ingest", kind, str(path), *common])
                if code != 0:
                    raise RuntimeError(f"ingest {kind} exited {code} on day {day}")
            out = folder / f"cl_{day}"
            code = _cli(["cluster", "--out", str(out), *common])
            if code not in (0, 2):
                raise RuntimeError(f"cluster exited {code} on day {day}")
            report = out / "insights.json"
            insights = json.loads(report.read_text())["insights"] if report.is_file() else []
            shown = [i["support"].get("standing") == "finding" for i in insights]
            before = [
                (i["support"].get("rerun") or {}).get("run_standing", i["support"].get("standing"))
                == "finding"
                for i in insights
            ]
            if any(shown) and first_new is None:
                first_new = day + 1
            if any(before) and first_old is None:
                first_old = day + 1
    return {"history": h, "first_finding_day": first_new, "first_finding_day_per_run_bh": first_old}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--histories", type=int, default=20)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--per-day", type=int, default=20)
    ap.add_argument("--feedback-rate", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workers", type=int, default=1, help="histories run side by side")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    os.environ.setdefault("CONTEXTOS_SIGNING_KEY", "benchmark-cluster-reruns")
    os.environ["CONTEXTOS_OVERRIDERS_FILE"] = str(PROJECT / "data/authorised_overriders.json")
    started = time.time()
    rows = []
    with ProcessPoolExecutor(args.workers) as pool:
        jobs = [
            pool.submit(history, h, args.days, args.per_day, args.feedback_rate, args.seed)
            for h in range(args.histories)
        ]
        done = [job.result() for job in jobs]
    for row in done:
        rows.append(row)
        print(
            f"history {row['history']:>3}: first finding shown on day {row['first_finding_day']} "
            f"(per-run BH alone: day {row['first_finding_day_per_run_bh']})",
            flush=True,
        )
    new = sum(r["first_finding_day"] is not None for r in rows) / len(rows)
    old = sum(r["first_finding_day_per_run_bh"] is not None for r in rows) / len(rows)
    print(f"\n{'rule':<40} {'histories with any finding':>28}")
    print(f"{'per-run Benjamini-Hochberg (before)':<40} {old:>28.3f}")
    print(f"{'alpha spent over looks (now)':<40} {new:>28.3f}")
    result = {
        "benchmark": "cluster --store re-run daily on null accumulating feedback",
        "settings": vars(args) | {"out": str(args.out)},
        "load_average": os.getloadavg(),
        "seconds": round(time.time() - started, 1),
        "goals": {
            "cluster_daily_reruns_false_findings": {
                "goal": "<= 0.05", "measured": round(new, 4), "met": new <= 0.05,
                "histories": len(rows), "per_run_bh_share": round(old, 4),
            },
        },
        "histories": rows,
    }  # fmt: skip
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
