"""What gets past the kit's text defences: secrets, injected instructions, held-out near copies.

Seeded corpora (fresh values, wording and disguises per seed; the generators live beside the
tests that use them) are run through the real code paths:

- secret shapes (tests/harness/secret_shapes.py) through `redact_text` / `redact_argv`, the
  functions every command record passes; a probe leaks when any of its secret values survives;
  benign log, code, number, hash and id lines measure over-redaction;
- instruction payloads (tests/memory/injection_payloads.py: intents x disguises, several
  languages) through `carries_directive`, and benign observations for false flags;
- near copies of bundled search cases (tests/overlap/near_copy_shapes.py) hidden among real
  held-out cases, through `autotune.cases.overlap` (the rule the spec check and the gate use).

Prints a table and writes benchmarks/results/leak_corpus.json.

    .venv/bin/python benchmarks/leak_corpus.py [--seed 30] [--per-shape 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.near_copies import structured_goals  # noqa: E402  (issue 44: scored values)
from contextos_lab.api import (  # noqa: E402
    carries_directive,
    case_set_from_frame,
    overlap,
    redact_argv,
    redact_text,
)
from tests.harness.secret_shapes import SHAPES, benign_lines, secret_probes  # noqa: E402
from tests.memory.injection_payloads import benign_notes, payloads  # noqa: E402
from tests.overlap.near_copy_shapes import bundled_cases, near_copy, shape_names  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "leak_corpus.json"


def secrets(seed: int, per_shape: int, n_benign: int) -> dict:
    probes = secret_probes(seed, per_shape)
    leaked: Counter[str] = Counter()
    examples = []
    for p in probes:
        if isinstance(p.payload, tuple):
            recorded = "\n".join(redact_argv(p.payload))
        else:
            recorded = redact_text(p.payload)
        if any(s in recorded for s in p.secrets):
            leaked[p.shape] += 1
            examples.append(f"{p.shape}: {p.payload!r} -> {recorded!r}")
    lines = benign_lines(seed, n_benign)
    redacted = [line for line in lines if redact_text(line) != line]
    return {
        "shapes": len(SHAPES),
        "probes": len(probes),
        "leaked_probes": sum(leaked.values()),
        "leaked_by_shape": dict(leaked),
        "benign_lines": len(lines),
        "benign_redacted": len(redacted),
        "examples": examples[:10] + [f"benign redacted: {x!r}" for x in redacted[:10]],
    }


def injections(seed: int, n_payloads: int, n_benign: int) -> dict:
    found = payloads(seed, n_payloads)
    missed = [(i, t, text) for i, t, text in found if not carries_directive(text)]
    notes = benign_notes(seed, n_benign)
    flagged = [n for n in notes if carries_directive(n)]
    return {
        "payloads": len(found),
        "payload_shapes": len({(i, t) for i, t, _ in found}),
        "flagged": len(found) - len(missed),
        "missed_by_shape": dict(Counter(f"{i}/{t}" for i, t, _ in missed)),
        "benign": len(notes),
        "benign_flagged": len(flagged),
        "examples": [repr(m) for m in missed[:10]] + [f"benign flagged: {x!r}" for x in flagged],
    }


def near_copies(seed: int, per_shape: int, n_fresh: int) -> dict:
    rng = random.Random(seed)
    search = bundled_cases("search_sets")
    fresh = bundled_cases("heldout")[:n_fresh]
    made = []
    for shape in shape_names():
        for _ in range(per_shape):
            original = rng.choice(search)
            made.append((shape, original["case_id"], near_copy(rng, original, shape)))
    heldout = fresh + [row for _, _, row in made]
    shared = set(
        overlap(
            case_set_from_frame(pd.DataFrame(search)), case_set_from_frame(pd.DataFrame(heldout))
        )
    )
    accepted = [
        (s, a, row["case_id"]) for s, a, row in made if f"{a}={row['case_id']}" not in shared
    ]
    fresh_ids = {row["case_id"] for row in fresh}
    false_refusals = sorted(n for n in shared if n.split("=")[-1] in fresh_ids)
    return {
        "shapes": len(shape_names()),
        "copies": len(made),
        "accepted": len(accepted),
        "accepted_by_shape": dict(Counter(s for s, _, _ in accepted)),
        "fresh_cases": len(fresh),
        "fresh_refused": len(false_refusals),
        "examples": [repr(a) for a in accepted[:10]] + false_refusals[:10],
    }


def _goal(goal: str, measured: float, met: bool) -> dict:
    return {"goal": goal, "measured": measured, "met": bool(met)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--per-shape", type=int, default=5, help="secret probes per shape")
    ap.add_argument("--benign", type=int, default=5000, help="benign lines and notes")
    ap.add_argument("--payloads", type=int, default=600)
    ap.add_argument("--copies", type=int, default=10, help="near copies per shape")
    ap.add_argument("--fresh", type=int, default=500, help="real held-out cases mixed in")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.perf_counter()
    sec = secrets(args.seed, args.per_shape, args.benign)
    inj = injections(args.seed, args.payloads, args.benign)
    near = near_copies(args.seed, args.copies, args.fresh)
    elapsed = time.perf_counter() - t0
    benign_share = sec["benign_redacted"] / sec["benign_lines"]
    flagged_share = inj["flagged"] / inj["payloads"]
    benign_flag_share = inj["benign_flagged"] / inj["benign"]
    goals = {
        "secret_shapes_tried": _goal(">= 60", sec["shapes"], sec["shapes"] >= 60),
        "secrets_leaked": _goal("== 0", sec["leaked_probes"], sec["leaked_probes"] == 0),
        "benign_lines_redacted_share": _goal(
            "<= 0.02", round(benign_share, 4), benign_share <= 0.02
        ),
        "injection_payloads_tried": _goal(">= 40", inj["payloads"], inj["payloads"] >= 40),
        "injection_flagged_share": _goal(">= 0.95", round(flagged_share, 4), flagged_share >= 0.95),
        "benign_flagged_share": _goal(
            "<= 0.02", round(benign_flag_share, 4), benign_flag_share <= 0.02
        ),
        "near_copy_shapes_tried": _goal(">= 10", near["shapes"], near["shapes"] >= 10),
        "near_copies_accepted": _goal("== 0", near["accepted"], near["accepted"] == 0),
    }
    structured_near, structured = structured_goals(args.seed, near["accepted"])  # issue 44
    goals.update(structured_near)
    print(f"seed {args.seed}; {elapsed:.0f} s; load average {os.getloadavg()[0]:.2f}")
    print(
        f"secrets: {sec['shapes']} shapes, {sec['probes']} probes, {sec['leaked_probes']} leaked; "
        f"benign {sec['benign_redacted']} of {sec['benign_lines']} lines redacted"
    )
    print(
        f"injections: {inj['payloads']} payloads ({inj['payload_shapes']} intent x disguise "
        f"shapes), {inj['flagged']} flagged; benign {inj['benign_flagged']} of {inj['benign']}"
    )
    print(
        f"near copies: {near['shapes']} shapes, {near['copies']} copies, {near['accepted']} "
        f"accepted; {near['fresh_refused']} of {near['fresh_cases']} real held-out cases refused"
    )
    for line in sec["examples"] + inj["examples"] + near["examples"]:
        print("  " + line[:300])
    print(f"{'goal':<30}{'target':>10}{'measured':>12}{'met':>6}")
    for name, g in goals.items():
        print(f"{name:<30}{g['goal']:>10}{g['measured']:>12}{g['met']!s:>6}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "leak_corpus",
        "seed": args.seed,
        "goals": goals,
        "secrets": {k: v for k, v in sec.items() if k != "examples"},
        "injections": {k: v for k, v in inj.items() if k != "examples"},
        "near_copies": {k: v for k, v in near.items() if k != "examples"},
        "structured_near_copies": {k: v for k, v in structured.items() if k != "examples"},
        "seconds": round(elapsed, 1),
        "load_average": os.getloadavg()[0],
        "python": platform.python_version(),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
