"""`contextos-lab ...`: one argparse tree; each stage registers its own subcommands.

A command module exposes `register(subparsers)`, adding parsers whose `func(args) -> int` runs
the command. Stages add themselves to COMMAND_MODULES; nothing else here needs to change.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES: tuple[str, ...] = (
    "contextos_lab.schemas.commands",
    "contextos_lab.store.commands",
    "contextos_lab.loaders.commands",
    "contextos_lab.insights.commands",
    "contextos_lab.harness.runs_commands",
    "contextos_lab.harness.cases_command",
    "contextos_lab.autotune.commands",
    "contextos_lab.gate.commands",
    "contextos_lab.sweep_command",
    "contextos_lab.proposals.commands",
    "contextos_lab.demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contextos-lab",
        description="Turn operator corrections and failed runs into typed proposals.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside the module: surface it
                raise
            continue  # stage not installed in this build; tests assert all are present
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
