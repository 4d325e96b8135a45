"""`contextos-lab ...`: one argparse tree, built only as far as the invoked command needs.

`cli.registry.COMMANDS` maps each command to the "module:function" that registers it. `--help`
lists the commands from that table alone; `contextos-lab X ...` imports and builds X's parser
only (the others stay one-line stubs), so a light command never pays for a heavy one's imports.

Conventions (see `cli.conventions`): register with `add_command(..., example=...)` so `--help`
shows an example; raise `contextos_lab.errors.UserError` for anything the user can fix. `main`
is the one place that turns a kit error (any `contextos_lab.errors.ContextosError`: its class
carries the exit status) and file-system errors such as an unwritable `--out` (exit 2) into one
line on stderr; anything else is a bug and keeps its traceback. argparse errors are one line
and exit 2 too (`Parser.error`).

`main` loads the domain project before the command runs, except for a command registered with
`set_defaults(loads_project=False)` (`runs tail`, `schema`, `store verify`: they read none, or
load it themselves when they do) and no `--project` given: a light command does not pay for
the project's configuration (issue 40).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from contextos_lab.cli.conventions import Formatter, Parser, report_user_error
from contextos_lab.cli.registry import COMMANDS, load, modules
from contextos_lab.errors import EXIT_STATUSES, ContextosError

#: Every command module (import each for a full tree: `build_parser()` with no command).
COMMAND_MODULES: tuple[str, ...] = modules()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: the full tree (`command` None), or that command's parser beside
    one-line stubs for the others, which is all `parse_args` of `command ...` needs (an
    unknown `command`, or "": stubs only, for `--help` and argparse's own errors)."""
    parser = Parser(
        prog="contextos-lab",
        description="Turn operator corrections and failed runs into typed proposals.",
        epilog="example:\n  contextos-lab demo --out out/demo\n"
        "  contextos-lab COMMAND --help   (each command's help ends with an example)\n"
        "exit status: " + ", ".join(f"{c} {m}" for c, m in EXIT_STATUSES.items()),
        formatter_class=Formatter,
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = None if command is None else COMMANDS.get(command, (None,))[0]
    built: set[str] = set()
    stub: argparse.ArgumentParser | None = None
    for name, (target, summary) in COMMANDS.items():
        if name in subparsers.choices:  # registered by an earlier name's function
            continue
        if (command is None or target == wanted) and target not in built:
            built.add(target)
            _register(subparsers, target)
        if name in subparsers.choices:
            continue
        if stub is None:
            stub = subparsers.add_parser(name, help=summary, add_help=False)
        else:  # one stub parser serves every name not built (never parsed with: see above)
            _add_stub(subparsers, name, summary, stub)
    return parser


def _add_stub(
    subparsers: argparse._SubParsersAction, name: str, summary: str, stub: argparse.ArgumentParser
) -> None:
    """`name` listed under --help with `summary`, parsed by the shared `stub`.

    What `add_parser` does minus building a parser: argparse has no public way to list a choice
    without one, and each costs ~1 ms of gettext look-ups (30 per start-up; issue 40)."""
    subparsers._choices_actions.append(subparsers._ChoicesPseudoAction(name, (), summary))
    subparsers._name_parser_map[name] = stub


def _register(subparsers: argparse._SubParsersAction, target: str) -> None:
    try:
        register = load(target)
    except ModuleNotFoundError as exc:
        if exc.name != target.partition(":")[0]:  # a real import error inside: surface it
            raise
        return  # stage not installed in this build; tests assert all are present
    before = set(subparsers.choices)
    register(subparsers)
    for name, sub in subparsers.choices.items():
        if name not in before:
            _with_project_option(sub)


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser `argv` needs: its command's (the first word) beside stubs for the rest."""
    return build_parser(next((a for a in argv if not a.startswith("-")), ""))


def _with_project_option(parser: argparse.ArgumentParser) -> None:
    """Every leaf command takes `--project DIR` (the domain), unless it declares its own."""
    from contextos_lab.cli.project_option import add_project_option

    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        if not any("--project" in a.option_strings for a in parser._actions):
            add_project_option(parser)
        return
    for action in nested:
        for sub in set(action.choices.values()):
            _with_project_option(sub)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser_for(argv).parse_args(argv)  # `--help` ends here, having imported no stage
    from contextos_lab.cli.next_steps import invocation
    from contextos_lab.cli.project_option import project_from_args
    from contextos_lab.domain import ENV as PROJECT_ENV

    project = None
    if getattr(args, "loads_project", True) or getattr(args, "project", None):
        project = project_from_args(args)  # the domain every command reads; one line, exit 2
        if project is None:
            return 2
    # notebooks' kernels (gate, sweep) and subprocesses read the same project as the command
    saved = os.environ.get(PROJECT_ENV)
    if project is not None:
        os.environ[PROJECT_ENV] = str(project.root)
    try:
        with invocation(args, project.root if project else None, build_parser):
            return int(args.func(args) or 0)
    except ContextosError as exc:  # every kit error: one line, its class's exit status
        return report_user_error(exc)
    except OSError as exc:  # an unwritable --out, a missing or unreadable file: the user's to fix
        return report_user_error(exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if project is not None:  # still active, but no longer the unnamed last resort
            from contextos_lab.domain.active import use_project

            use_project(project)
        if saved is None:
            os.environ.pop(PROJECT_ENV, None)
        else:
            os.environ[PROJECT_ENV] = saved


if __name__ == "__main__":
    sys.exit(main())
