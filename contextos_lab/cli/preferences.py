"""`contextos-lab preferences FILE`: Bradley-Terry win rates from pairwise judgements."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from contextos_lab.cli.conventions import add_command, positive_int
from contextos_lab.errors import UserError

if TYPE_CHECKING:
    from contextos_lab.schemas.preference import PreferenceEntry


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "preferences",
        example=[
            "contextos-lab preferences prefs.jsonl --by subject --out win_rates.json",
            "contextos-lab preferences prefs.csv --criterion helpfulness",
        ],
        description=(
            "Load PreferenceEntry rows (bad rows quarantined beside --out with file, line and "
            "field), fit Bradley-Terry strengths per subject (or per decision key) and print "
            "each subject's chance of beating a random other one, with a 95%% bootstrap "
            "interval. `contextos-lab ingest preferences FILE` stores the signed entries."
        ),
    )
    p.add_argument("file", help="preferences file (.jsonl, .json, .csv, .parquet)")
    p.add_argument("--criterion", default=None, help="only judgements on this criterion")
    p.add_argument("--by", choices=["subject", "decision_key"], default="subject")
    p.add_argument("--n-boot", type=positive_int, default=200)
    p.add_argument("--out", default=None, help="write the table as JSON records here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from contextos_lab.insights.preferences import win_rates
    from contextos_lab.loaders.quarantine import write_quarantine
    from contextos_lab.loaders.records import load_records

    if not Path(args.file).is_file():
        raise UserError(f"{args.file}: no such file")
    loaded = load_records("preferences", args.file)
    entries = cast("list[PreferenceEntry]", list(loaded.records))  # the "preferences" kind
    if loaded.quarantined:
        target = write_quarantine(Path(args.file), loaded.quarantined)
        print(f"quarantined {len(loaded.quarantined)} row(s): {target}")
    if not entries:
        raise UserError(f"{args.file}: no valid preference judgement was read")
    table = win_rates(entries, criterion=args.criterion, by=args.by, n_boot=args.n_boot)
    if table.empty:
        raise UserError(f"{args.file}: fewer than two subjects to compare")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        table.to_json(args.out, orient="records", indent=1)
        print(f"wrote {args.out}")
    return 0
