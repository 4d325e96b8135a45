"""`contextos-lab ...`: one argparse tree; each stage registers its own subcommands.

A command module exposes `register(subparsers)`, adding parsers whose `func(args) -> int` runs
the command. Stages add themselves to COMMAND_MODULES; nothing else here needs to change.

Conventions (see `cli.conventions`): register with `add_command(..., example=...)` so `--help`
shows an example; raise `contextos_lab.errors.UserError` for anything the user can fix. `main`
is the one place that turns those (and file-system errors such as an unwritable `--out`) into
one line on stderr and exit 2; argparse errors are one line and exit 2 too (`Parser.error`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from contextos_lab.cli.conventions import Formatter, Parser, report_user_error
from contextos_lab.cli.next_steps import invocation
from contextos_lab.cli.project_option import add_project_option, project_from_args
from contextos_lab.domain.active import ENV as PROJECT_ENV
from contextos_lab.errors import EXIT_STATUSES, ExitError

COMMAND_MODULES: tuple[str, ...] = (
    "contextos_lab.cli.project",
    "contextos_lab.cli.schemas",
    "contextos_lab.cli.store",
    "contextos_lab.cli.loaders",
    "contextos_lab.cli.insights",
    "contextos_lab.cli.attribution",
    "contextos_lab.cli.preferences",
    "contextos_lab.cli.runs",
    "contextos_lab.cli.cases",
    "contextos_lab.cli.autotune",
    "contextos_lab.cli.enqueue",
    "contextos_lab.cli.dashboard",
    "contextos_lab.cli.gate",
    "contextos_lab.cli.heldout",
    "contextos_lab.cli.sweep",
    "contextos_lab.cli.proposals",
    "contextos_lab.cli.release",
    "contextos_lab.cli.monitor",
    "contextos_lab.cli.bundle",
    "contextos_lab.cli.goldens",
    "contextos_lab.cli.loop",
    "contextos_lab.cli.demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="contextos-lab",
        description="Turn operator corrections and failed runs into typed proposals.",
        epilog="example:\n  contextos-lab demo --out out/demo\n"
        "  contextos-lab COMMAND --help   (each command's help ends with an example)\n"
        "exit status: " + ", ".join(f"{c} {m}" for c, m in EXIT_STATUSES.items()),
        formatter_class=Formatter,
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
    _with_project_option(parser)
    return parser


def _with_project_option(parser: argparse.ArgumentParser) -> None:
    """Every leaf command takes `--project DIR` (the domain), unless it declares its own."""
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        if not any("--project" in a.option_strings for a in parser._actions):
            add_project_option(parser)
        return
    for action in nested:
        for sub in set(action.choices.values()):
            _with_project_option(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    project = project_from_args(args)  # the domain every command reads; one line, exit 2
    if project is None:
        return 2
    # notebooks' kernels (gate, sweep) and subprocesses read the same project as the command
    saved = os.environ.get(PROJECT_ENV)
    os.environ[PROJECT_ENV] = str(project.root)
    try:
        with invocation(args, project, parser):
            return int(args.func(args) or 0)
    except ExitError as exc:  # a user error (2) or an unreachable server (3): one line
        return report_user_error(exc)
    except OSError as exc:  # an unwritable --out, a missing or unreadable file: the user's to fix
        return report_user_error(exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if saved is None:
            os.environ.pop(PROJECT_ENV, None)
        else:
            os.environ[PROJECT_ENV] = saved


if __name__ == "__main__":
    sys.exit(main())
