"""`contextos-lab cases import FILE --out DIR`: the simple case format to search/held-out sets."""

from __future__ import annotations

import argparse
import sys

from contextos_lab.cli.conventions import add_command
from contextos_lab.harness.case_format import CaseFormatError, convert


def register(subparsers: argparse._SubParsersAction) -> None:
    example = "contextos-lab cases import examples/standin_llm/cases.jsonl --out my_sets"
    p = add_command(
        subparsers, "cases", help="convert hand-written cases into case sets", example=example
    )
    sub = p.add_subparsers(dest="cases_command", required=True, metavar="ACTION")
    imp = add_command(
        sub,
        "import",
        help="JSONL/YAML/CSV cases (inputs + assertions) -> DIR/search.jsonl, DIR/heldout.jsonl",
        example=[example, "contextos-lab cases import cases.csv --out sets --heldout-share 0.3"],
    )
    imp.add_argument("file", help="cases: .jsonl, .yaml/.yml or .csv")
    imp.add_argument("--out", required=True, help="folder for search.jsonl and heldout.jsonl")
    imp.add_argument("--heldout-share", type=float, default=0.5, help="share held out (0..1)")
    imp.add_argument("--seed", type=int, default=0, help="seed of the stable split")
    imp.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    try:
        done = convert(args.file, args.out, heldout_share=args.heldout_share, seed=args.seed)
    except (CaseFormatError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{done.n_search} search cases -> {done.search}; "
        f"{done.n_heldout} held-out cases -> {done.heldout}"
    )
    if done.duplicates:
        shown = ", ".join(f"{d} (= {k})" for d, k in done.duplicates[:10])
        more = f" and {len(done.duplicates) - 10} more" if len(done.duplicates) > 10 else ""
        print(
            f"dropped {len(done.duplicates)} content duplicate(s), kept once so search and "
            f"held-out never share a case: {shown}{more}"
        )
    print(
        "use them in a spec: search_set / heldout_test_set, "
        "evaluate: contextos_lab.evaluators.assertions:evaluate"
    )
    return 0
