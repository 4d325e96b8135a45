"""What every subcommand shares: one-line usage errors, an example in `--help`, progress flags.

Use it when registering a command::

    from contextos_lab.cli.conventions import add_command, positive_int
    p = add_command(subparsers, "search", example="contextos-lab search s.yaml")
    p.add_argument("--workers", type=positive_int, default=1)

and raise `contextos_lab.errors.UserError` for anything the user can fix: `cli.main` prints it
as one line on stderr and exits 2. argparse's own errors (unknown flag, bad type) go through
`Parser.error`, also one line and exit 2. `tests/cli/test_conventions.py` checks every
registered subcommand has an example and that the listed misuses exit 2 with one line.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from contextos_lab.errors import EXIT_USAGE, ContextosError, UserError, one_line

__all__ = [
    "Formatter",
    "Parser",
    "UserError",
    "add_command",
    "add_progress_flag",
    "examples_epilog",
    "iso_datetime",
    "non_negative_int",
    "positive_int",
    "show_progress",
]


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `contextos-lab search: error: ... (see --help)`, exit 2.

    Sub-parsers made by `add_subparsers` inherit this class, so every subcommand gets it.
    """

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see --help)\n")


class Formatter(argparse.HelpFormatter):
    """Wraps each line of a description/epilog on its own: prose reflows, example lines and
    their indentation stay as written (RawDescriptionHelpFormatter would not wrap prose)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for line in text.splitlines():
            lead = line[: len(line) - len(line.lstrip())]
            if lead:  # indented (an example command): keep it as is
                out.append(indent + line)
            else:
                out.append(
                    textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent)
                    if line
                    else ""
                )
        return "\n".join(out)


def examples_epilog(examples: str | Iterable[str]) -> str:
    """`example:` followed by one indented command per line."""
    items = [examples] if isinstance(examples, str) else list(examples)
    if not items:
        raise ValueError("a subcommand's --help needs at least one example")
    head = "example:" if len(items) == 1 else "examples:"
    return head + "\n" + "\n".join(f"  {e}" for e in items)


def add_command(
    subparsers: argparse._SubParsersAction,
    name: str,
    *,
    example: str | Iterable[str],
    help: str | None = None,
    description: str | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """A subcommand parser whose `--help` ends with an example and whose errors are one line.

    A top-level command's `help` is its line in `cli.registry.COMMANDS` unless given here.
    """
    if help is None:
        from contextos_lab.cli.registry import summary

        help = summary(name)
    return subparsers.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=examples_epilog(example),
        formatter_class=Formatter,
        **kwargs,
    )


def add_progress_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (it is off anyway when stderr is not a terminal)",
    )


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only for a person watching: a TTY on stderr and no `--no-progress`."""
    return not getattr(args, "no_progress", False) and sys.stderr.isatty()


# -- argparse `type=` callables: a bad value is an argparse error (one line, exit 2) ----------


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def iso_datetime(text: str) -> datetime:
    """An ISO-8601 time with a zone, e.g. 2026-04-01T00:00:00+00:00 (or ...Z)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO time: {text!r} (e.g. 2026-04-01T00:00:00+00:00)"
        ) from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} has no timezone (e.g. 2026-04-01T00:00:00+00:00)"
        )
    return value


def report_user_error(exc: BaseException) -> int:
    """Print `error: <one line>` on stderr; the exit status."""
    print(f"error: {one_line(exc)}", file=sys.stderr)
    return exc.code if isinstance(exc, ContextosError) else EXIT_USAGE
