"""Near copies are near in what is scored: structured cases kept apart, copies still refused.

Two figures for `leak_corpus.py` (which calls `structured_goals`), or printed alone:

- `structured_distinct_pairs_refused`: a generated structured set (records of enums, numbers
  and flags with assertions, tests/overlap/structured_cases.py) where every pair differs in a
  scored field, many in one field only, is split in two and put through
  `autotune.cases.overlap_details` (the spec check's and the gate's rule); every refused pair
  counts. The set is also put through `cases import` and the spec check it must pass.
- `near_copy_shapes_accepted`: every near-copy shape (tests/overlap/near_copy_shapes.py) made
  of those structured cases, hidden among them, through the same rule; plus the count
  `leak_corpus.py` measured on bundled cases when it passes one.

    .venv/bin/python benchmarks/near_copies.py [--seed 30] [--cases 300]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contextos_lab.api import (  # noqa: E402
    SimpleCase,
    case_row,
    case_set_from_frame,
    convert,
    default_set_checker,
    overlap_details,
)
from tests.overlap.near_copy_shapes import near_copy, shape_names  # noqa: E402
from tests.overlap.structured_cases import structured_cases  # noqa: E402


def _rows(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The flat rows `cases import` writes (what a search/held-out set holds)."""
    return [case_row(SimpleCase.model_validate(c), i) for i, c in enumerate(cases)]


def _set(rows: list[dict[str, Any]]) -> Any:
    return case_set_from_frame(pd.DataFrame(rows))


def structured(seed: int, n_cases: int, per_shape: int) -> dict[str, Any]:
    cases = structured_cases(n_cases, seed)
    rows = _rows(cases)
    search, heldout = rows[::2], rows[1::2]  # a base and its one-field variants fall apart
    refused = overlap_details(_set(search), _set(heldout))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "cases.jsonl"
        src.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
        done = convert(src, Path(tmp) / "sets", heldout_share=0.5, seed=seed)
        import_refused = default_set_checker(done.search, done.heldout)
    rng = random.Random(seed)
    made = []
    for shape in shape_names():
        for _ in range(per_shape):
            original = rng.choice(search)
            made.append((shape, original["case_id"], near_copy(rng, original, shape)))
    shared = {n for n, _ in overlap_details(_set(search), _set(heldout + [r for *_, r in made]))}
    accepted = [(s, a, r["case_id"]) for s, a, r in made if f"{a}={r['case_id']}" not in shared]
    return {
        "cases": len(rows),
        "pairs_refused": len(refused),
        "import_split_refused": len(import_refused),
        "import_moved": len(done.moved),
        "shapes": len(shape_names()),
        "copies": len(made),
        "accepted": len(accepted),
        "accepted_by_shape": dict(Counter(s for s, _, _ in accepted)),
        "examples": [f"refused: {n} ({how})" for n, how in refused[:5]]
        + [str(x)[:300] for x in import_refused[:1]]
        + [f"accepted: {a!r}" for a in accepted[:5]],
    }


def structured_goals(
    seed: int, bundled_accepted: int = 0, n_cases: int = 300, per_shape: int = 5
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(goal entries, details) for leak_corpus.json; `bundled_accepted` is leak_corpus's own
    count of near copies of bundled cases accepted, added to the structured count."""
    got = structured(seed, n_cases, per_shape)
    refused = got["pairs_refused"] + got["import_split_refused"]
    accepted = got["accepted"] + bundled_accepted
    goals = {
        "structured_distinct_pairs_refused": {
            "goal": "== 0", "measured": refused, "met": refused == 0
        },
        "near_copy_shapes_accepted": {"goal": "== 0", "measured": accepted, "met": accepted == 0},
    }  # fmt: skip
    return goals, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--per-shape", type=int, default=5)
    args = ap.parse_args()
    goals, got = structured_goals(args.seed, 0, args.cases, args.per_shape)
    print(
        f"structured: {got['cases']} cases, {got['pairs_refused']} distinct pairs refused, "
        f"import split refused {got['import_split_refused']} (moved {got['import_moved']}); "
        f"{got['copies']} near copies of {got['shapes']} shapes, {got['accepted']} accepted"
    )
    for line in got["examples"]:
        print("  " + line)
    for name, g in goals.items():
        print(f"{name:<36}{g['goal']:>8}{g['measured']:>10}{g['met']!s:>6}")


if __name__ == "__main__":
    main()
