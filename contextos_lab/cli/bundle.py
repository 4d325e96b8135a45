"""`contextos-lab bundle --out DIR`: the change-control bundle of every proposal for review."""

from __future__ import annotations

import argparse
from pathlib import Path

from contextos_lab.cli.common import add_store_options, next_step, store_of
from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError


def _bundle(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.files.change_bundle import (
        MANIFEST,
        REVIEW_CANDIDATE,
        write_bundle,
    )

    store = store_of(args)
    gate = Path(args.gate) if args.gate else None
    if gate is not None and not gate.is_dir():
        raise UserError(f"--gate {gate}: no such folder (a `contextos-lab gate --out` folder)")
    manifest = write_bundle(store, Path(args.out), gate_dir=gate)
    counts = ", ".join(f"{n} {k}" for k, n in manifest["counts"].items()) or "nothing"
    print(f"{len(manifest['entries'])} entries ({counts}) -> {Path(args.out) / MANIFEST}")
    for e in manifest["entries"]:
        if e["kind"] == REVIEW_CANDIDATE:  # the entry's kind, not its `marked` words
            print(f"  review candidate {e['id']}: underpowered, needs n={e['sample_size_needed']}")
    next_step(f"hand {args.out} to the change-control reviewer")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "bundle",
        example="contextos-lab bundle --out out/change-control --gate out/gate",
    )
    p.add_argument("--out", required=True, help="bundle folder")
    p.add_argument("--gate", default=None, help="a gate --out folder (gate.json, proposals/)")
    add_store_options(p, bundles=False)
    p.set_defaults(func=_bundle)
