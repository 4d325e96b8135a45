"""Fuzz every loader and `ingest` with seeded malformed files; count what escapes.

Feeds N generated files (tests/loaders/malformed.py: non-finite and overflowing numbers, lone
surrogates, undecodable bytes, deep nesting, ids with a trailing newline, repeated keys, wrong
types, truncation, BOMs, garbage) through the JSONL/JSON/CSV/Parquet record loaders plus
`ingest` into a real SQLite experience store, and through the OTLP, tau-bench and Who&When trace
loaders. Then every encoding x damage (tests/loaders/encodings.py: UTF-8, UTF-8 with BOM,
UTF-16 LE/BE with BOM, cp1252, Latin-1 x none, truncated, a stray byte, a CRLF conversion, a NUL)
`--per-encoding` files each, counted per pair. Prints tables and writes
benchmarks/results/fuzz_loaders.json.

    .venv/bin/python benchmarks/fuzz_loaders.py [--files 10000] [--seed 14] [--per-encoding 40]

Measured per file: a traceback (any exception but the one clear "unreadable file" error),
rows in != accepted + quarantined (where the generator knows the row count), quarantine
entries without a field for a row-level problem, and stored values that differ in meaning
from what the file held.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.results_file import write_result  # noqa: E402
from contextos_lab.api import ExperienceStore  # noqa: E402
from tests.loaders.encodings import DAMAGE, ENCODINGS, encoding_case  # noqa: E402
from tests.loaders.malformed import make_case, run_case  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "fuzz_loaders.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--show", type=int, default=5, help="examples of each failure to print")
    ap.add_argument("--per-encoding", type=int, default=40, help="files per encoding x damage")
    args = ap.parse_args()
    os.environ.setdefault("CONTEXTOS_SIGNING_KEY", "fuzz-key")
    rng = random.Random(args.seed)
    per_loader: dict[str, Counter[str]] = {}
    examples: list[str] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz_loaders_") as tmp:
        root = Path(tmp)
        store = ExperienceStore(
            f"sqlite:///{root / 'store.db'}", authorised_overriders={"user_finance_lead_77"}
        )
        per_encoding: dict[str, Counter[str]] = {}
        grid = [(e, d) for e in ENCODINGS for d in DAMAGE for _ in range(args.per_encoding)]
        made = [(make_case(root, i, rng), None) for i in range(args.files)]
        for index, (encoding, damage) in enumerate(grid, start=args.files):
            made.append((encoding_case(root, index, rng, encoding, damage), f"{encoding}/{damage}"))
        for case, pair in made:
            out = run_case(case, store)
            if pair is not None:
                e = per_encoding.setdefault(pair, Counter())
                e["files"] += 1
                e["tracebacks"] += out.traceback is not None
                e["unreadable"] += out.unreadable
                e["accepted"] += out.accepted
                e["quarantined"] += out.quarantined
                e["unaccounted"] += out.unaccounted
                e["altered"] += out.altered
            c = per_loader.setdefault(f"{case.loader}/{case.fmt}", Counter())
            c["files"] += 1
            c["tracebacks"] += out.traceback is not None
            c["unreadable"] += out.unreadable
            c["rows_checked"] += out.rows_checked
            c["unaccounted"] += out.unaccounted
            c["without_field"] += out.without_field
            c["altered"] += out.altered
            c["accepted"] += out.accepted
            c["quarantined"] += out.quarantined
            if out.traceback and len(examples) < 40:
                examples.append(f"{case.path.name} {case.damage}: {out.traceback.strip()[-400:]}")
            for d in out.details[: args.show]:
                if len(examples) < 80:
                    examples.append(f"{case.path.name} {case.damage}: {d}")
            if out.unaccounted and len(examples) < 80:
                examples.append(
                    f"{case.path.name} {case.damage}: rows_in {case.rows_in} != "
                    f"{out.accepted} + {out.quarantined}"
                )
        verify = store.verify()
    elapsed = time.perf_counter() - t0
    total: Counter[str] = sum(per_loader.values(), Counter())
    cols = (
        "files",
        "tracebacks",
        "unreadable",
        "rows_checked",
        "unaccounted",
        "without_field",
        "altered",
        "accepted",
        "quarantined",
    )
    print(f"{'loader/format':<24}" + "".join(f"{c:>14}" for c in cols))
    for name in sorted(per_loader):
        print(f"{name:<24}" + "".join(f"{per_loader[name][c]:>14}" for c in cols))
    print(f"{'total':<24}" + "".join(f"{total[c]:>14}" for c in cols))
    enc_cols = ("files", "tracebacks", "unreadable", "accepted", "quarantined", "unaccounted")
    print(f"\n{'encoding/damage':<24}" + "".join(f"{c:>13}" for c in enc_cols))
    for name in sorted(per_encoding):
        print(f"{name:<24}" + "".join(f"{per_encoding[name][c]:>13}" for c in enc_cols))
    enc_tracebacks = sum(c["tracebacks"] for c in per_encoding.values())
    print(f"store verify after the run: {verify}")
    print(f"{elapsed:.0f} s; load average {os.getloadavg()[0]:.2f}")
    for line in examples[: args.show * 6]:
        print("  " + line.replace("\n", " | ")[:600])
    goals = {
        "files_tried": {
            "goal": ">= 10000",
            "measured": total["files"],
            "met": total["files"] >= 10_000,
        },
        "tracebacks": {"goal": 0, "measured": total["tracebacks"], "met": total["tracebacks"] == 0},
        "rows_unaccounted": {
            "goal": 0,
            "measured": total["unaccounted"],
            "met": total["unaccounted"] == 0,
        },
        "quarantine_without_field": {
            "goal": 0,
            "measured": total["without_field"],
            "met": total["without_field"] == 0,
        },
        "values_altered": {"goal": 0, "measured": total["altered"], "met": total["altered"] == 0},
        "encoding_damage_pairs_tried": {
            "goal": f">= {len(ENCODINGS) * len(DAMAGE)}",
            "measured": len(per_encoding),
            "met": len(per_encoding) >= len(ENCODINGS) * len(DAMAGE),
        },
        "encoding_tracebacks": {"goal": 0, "measured": enc_tracebacks, "met": enc_tracebacks == 0},
    }
    write_result(
        args.out,
        {
            "benchmark": "fuzz_loaders",
            "seed": args.seed,
            "goals": goals,
            "per_loader": {k: dict(v) for k, v in sorted(per_loader.items())},
            "per_encoding": {k: dict(v) for k, v in sorted(per_encoding.items())},
            "store_verify_ok": verify.ok,
        },
        elapsed,
    )


if __name__ == "__main__":
    main()
