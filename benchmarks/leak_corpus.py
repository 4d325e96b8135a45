"""What gets past the kit's text defences: secrets, injected instructions, held-out near copies.

Seeded corpora (fresh values, wording and disguises per seed; the generators live beside the
tests that use them) are run through the real code paths:

- secret shapes (tests/harness/secret_shapes.py) through `redact_text` / `redact_argv`, the
  functions every command record passes; a probe leaks when any of its secret values survives;
  benign log, code, number, hash and id lines measure over-redaction;
- pass-4 vendor tokens, CLI password argv forms and benign look-alikes
  (benchmarks/corpora/vendor_secrets.py) through the same functions, with each detector layer
  (detect-secrets, CredSweeper, the kit's token-design rule) scored alone for comparison;
- pass-4 instruction payloads (benchmarks/corpora/injections.py: languages, encodings,
  separators, data shapes, directive shapes; a development and a held-out template set, scored
  apart) and pass-4 benign operator notes, through `carries_directive`;
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
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.corpora.injections import LANGUAGES  # noqa: E402
from benchmarks.corpora.injections import benign_notes as operator_notes  # noqa: E402
from benchmarks.corpora.injections import payloads as pass4_payloads  # noqa: E402
from benchmarks.corpora.vendor_secrets import (  # noqa: E402
    ARGV_FORMS,
    HELDOUT_VENDORS,
    VENDORS,
    argv_probes,
    lookalike_lines,
    vendor_probes,
)
from benchmarks.near_copies import structured_goals  # noqa: E402  (issue 44: scored values)
from contextos_lab.api import (  # noqa: E402  # noqa: E402
    carries_directive,
    case_set_from_frame,
    credsweeper_hit,
    overlap,
    prefixed_token_hit,
    redact_argv,
    redact_text,
    scanner_hit,
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


def _recorded(payload: str | tuple[str, ...]) -> str:
    return "\n".join(redact_argv(payload)) if isinstance(payload, tuple) else redact_text(payload)


#: Each detector layer alone, line by line (what a redactor built on it alone would catch).
LAYERS = {
    "detect-secrets": scanner_hit,
    "credsweeper": credsweeper_hit,
    "token design rule": prefixed_token_hit,
}


def vendor_secrets(seed: int, per_vendor: int, n_benign: int) -> dict:
    """Pass-4 corpus: vendor tokens and argv forms (text and argv) through the redactor, and
    each layer alone on the same lines."""
    heldout = vendor_probes(seed, per_vendor, heldout=True)
    vendors = vendor_probes(seed, per_vendor) + heldout
    forms = argv_probes(seed, per_vendor)
    leaked = Counter(p.shape for p in vendors if any(s in _recorded(p.payload) for s in p.secrets))
    argv_leaked: Counter[str] = Counter()
    for p in forms:
        assert isinstance(p.payload, tuple)
        shell_line = "+ " + shlex.join(p.payload)  # the same command echoed by `set -x`
        for recorded in (_recorded(p.payload), redact_text(shell_line)):
            if any(s in recorded for s in p.secrets):
                argv_leaked[p.shape] += 1
    lines = lookalike_lines(seed, n_benign)
    redacted = [line for line in lines if redact_text(line) != line]
    layers = {}
    for name, hit in LAYERS.items():
        missed = {p.shape for p in vendors if hit(str(p.payload)) is None}
        layers[name] = {
            "vendor_probes_caught": sum(hit(str(p.payload)) is not None for p in vendors),
            "vendors_missed": len(missed),
            "benign_flagged": sum(hit(line) is not None for line in lines),
        }
    return {
        "vendors": len(VENDORS) + len(HELDOUT_VENDORS),
        "heldout_vendors": len(HELDOUT_VENDORS),
        "vendor_probes": len(vendors),
        "vendor_probes_leaked": sum(leaked.values()),
        "heldout_probes_leaked": sum(leaked[v] for v in HELDOUT_VENDORS),
        "leaked_by_vendor": dict(leaked),
        "argv_forms": len(ARGV_FORMS),
        "argv_probes": 2 * len(forms),
        "argv_probes_leaked": sum(argv_leaked.values()),
        "argv_leaked_by_form": dict(argv_leaked),
        "lookalike_lines": len(lines),
        "lookalikes_redacted": len(redacted),
        "layers": layers,
        "examples": [f"leaked vendor: {v}" for v in leaked]
        + [f"leaked argv form: {f}" for f in argv_leaked]
        + [f"look-alike redacted: {x!r}" for x in redacted[:10]],
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


def injection_shapes(seed: int, n_benign: int) -> dict:
    """Pass-4 payloads, development and held-out template sets apart, and operator notes."""
    out: dict = {"languages": len(LANGUAGES)}
    missed_all = []
    for split in ("dev", "heldout"):
        found = pass4_payloads(seed, split)
        missed = [(f, s, t) for f, s, t in found if not carries_directive(t)]
        missed_all += missed
        out[split] = {
            "payloads": len(found),
            "flagged": len(found) - len(missed),
            "missed_by_family": dict(Counter(f"{f}/{s}" for f, s, _ in missed)),
        }
    notes = operator_notes(seed, n_benign)
    flagged = [n for n in notes if carries_directive(n)]
    out["payloads"] = out["dev"]["payloads"] + out["heldout"]["payloads"]
    out["flagged"] = out["dev"]["flagged"] + out["heldout"]["flagged"]
    out["benign"] = len(notes)
    out["benign_flagged"] = len(flagged)
    out["examples"] = [f"missed: {t!r}" for _, _, t in missed_all[:10]] + [
        f"operator note flagged: {n!r}" for n in flagged[:10]
    ]
    return out


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
    ap.add_argument("--per-vendor", type=int, default=3, help="tokens per vendor / argv form")
    ap.add_argument("--lookalikes", type=int, default=3000, help="benign look-alike lines")
    ap.add_argument("--benign", type=int, default=5000, help="benign lines and notes")
    ap.add_argument("--payloads", type=int, default=600)
    ap.add_argument("--notes", type=int, default=1000, help="pass-4 benign operator notes")
    ap.add_argument("--copies", type=int, default=10, help="near copies per shape")
    ap.add_argument("--fresh", type=int, default=500, help="real held-out cases mixed in")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.perf_counter()
    sec = secrets(args.seed, args.per_shape, args.benign)
    ven = vendor_secrets(args.seed, args.per_vendor, args.lookalikes)
    inj = injections(args.seed, args.payloads, args.benign)
    shapes = injection_shapes(args.seed, args.notes)
    near = near_copies(args.seed, args.copies, args.fresh)
    elapsed = time.perf_counter() - t0
    benign_share = sec["benign_redacted"] / sec["benign_lines"]
    lookalike_share = (sec["benign_redacted"] + ven["lookalikes_redacted"]) / (
        sec["benign_lines"] + ven["lookalike_lines"]
    )
    flagged_share = inj["flagged"] / inj["payloads"]
    shape_share = shapes["flagged"] / shapes["payloads"]
    notes_share = shapes["benign_flagged"] / shapes["benign"]
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
        "secret_vendors_tried": _goal(">= 60", ven["vendors"], ven["vendors"] >= 60),
        "secret_shapes_leaked": _goal(
            "== 0", ven["vendor_probes_leaked"], ven["vendor_probes_leaked"] == 0
        ),
        "argv_password_forms_tried": _goal(">= 12", ven["argv_forms"], ven["argv_forms"] >= 12),
        "argv_password_forms_leaked": _goal(
            "== 0", len(ven["argv_leaked_by_form"]), not ven["argv_leaked_by_form"]
        ),
        "benign_redacted_share": _goal(
            "<= 0.02", round(lookalike_share, 4), lookalike_share <= 0.02
        ),
        "injection_languages_tried": _goal(">= 12", shapes["languages"], shapes["languages"] >= 12),
        "injection_shapes_flagged_share": _goal(
            ">= 0.95", round(shape_share, 4), shape_share >= 0.95 and shapes["payloads"] >= 300
        ),
        "benign_notes_flagged_share": _goal(
            "<= 0.02", round(notes_share, 4), notes_share <= 0.02 and shapes["benign"] >= 200
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
        f"vendor tokens: {ven['vendors']} vendors ({ven['heldout_vendors']} held out), "
        f"{ven['vendor_probes']} probes, {ven['vendor_probes_leaked']} leaked "
        f"({ven['heldout_probes_leaked']} held-out); argv: {ven['argv_forms']} forms, "
        f"{ven['argv_probes']} probes (argv and shell line), {ven['argv_probes_leaked']} leaked; "
        f"look-alikes {ven['lookalikes_redacted']} of {ven['lookalike_lines']} redacted"
    )
    print(f"  {'layer alone':<20}{'probes caught':>15}{'vendors missed':>16}{'benign hit':>12}")
    for name, row in ven["layers"].items():
        print(
            f"  {name:<20}{row['vendor_probes_caught']:>9} of {ven['vendor_probes']:<3}"
            f"{row['vendors_missed']:>16}{row['benign_flagged']:>12}"
        )
    print(
        f"injections: {inj['payloads']} payloads ({inj['payload_shapes']} intent x disguise "
        f"shapes), {inj['flagged']} flagged; benign {inj['benign_flagged']} of {inj['benign']}"
    )
    for split in ("dev", "heldout"):
        row = shapes[split]
        print(
            f"pass-4 injections ({split} templates): {row['payloads']} payloads, "
            f"{row['flagged']} flagged ({row['flagged'] / row['payloads']:.3f})"
        )
    print(
        f"pass-4 operator notes: {shapes['benign_flagged']} of {shapes['benign']} flagged; "
        f"{shapes['languages']} languages"
    )
    print(
        f"near copies: {near['shapes']} shapes, {near['copies']} copies, {near['accepted']} "
        f"accepted; {near['fresh_refused']} of {near['fresh_cases']} real held-out cases refused"
    )
    examples = sec["examples"] + ven["examples"] + inj["examples"] + shapes["examples"]
    for line in examples + near["examples"]:
        print("  " + line[:300])
    print(f"{'goal':<36}{'target':>10}{'measured':>12}{'met':>6}")
    for name, g in goals.items():
        print(f"{name:<36}{g['goal']:>10}{g['measured']:>12}{g['met']!s:>6}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "leak_corpus",
        "seed": args.seed,
        "goals": goals,
        "secrets": {k: v for k, v in sec.items() if k != "examples"},
        "vendor_secrets": {k: v for k, v in ven.items() if k != "examples"},
        "injections": {k: v for k, v in inj.items() if k != "examples"},
        "injection_shapes": {k: v for k, v in shapes.items() if k != "examples"},
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
