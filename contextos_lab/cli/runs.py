"""`contextos-lab runs tail [FILE]`: the latest command records, failures first in the eye.

A reviewer needs, per record: when, which command, exit status (null spelled out), duration,
the caller's note, the retry chain, and, for the latest failure, its error and stderr tail.
The latest non-zero (or null) exit is marked `>>` and shown again in full at the bottom.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError
from contextos_lab.harness.record_path import default_record_path

if TYPE_CHECKING:  # the record model (pydantic) loads when records are read, not for --help
    from contextos_lab.harness.command_record import CommandRecord

_RED = "\033[1;31m"
_RESET = "\033[0m"


def _status(record: CommandRecord) -> str:
    if record.exit_code is None:
        return "exit=null (timeout)" if record.timed_out else "exit=null"
    return f"exit={record.exit_code}"


def _command_text(record: CommandRecord, width: int = 90) -> str:
    text = shlex.join(record.command).replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 3] + "..."


def render_tail(
    records: Sequence[CommandRecord], count: int = 10, color: bool = False, stderr_lines: int = 8
) -> str:
    """The text `runs tail` prints for the last `count` of `records`."""
    from contextos_lab.harness.command_record import retry_chain

    shown = list(records[-count:]) if count > 0 else []
    failed = [r for r in records if not r.succeeded]
    latest_failure = failed[-1] if failed else None
    out: list[str] = [f"{len(shown)} of {len(records)} records"]
    for record in shown:
        is_latest_failure = latest_failure is not None and record is latest_failure
        mark = ">>" if is_latest_failure else ("!!" if not record.succeeded else "  ")
        line = (
            f"{mark} {record.started_at:%Y-%m-%d %H:%M:%S} {record.command_id} "
            f"{_status(record):<20} {record.duration_ms:>10.1f} ms  {_command_text(record)}"
        )
        out.append(f"{_RED}{line}{_RESET}" if color and is_latest_failure else line)
        if record.parent_command_id:
            out.append(f"     retry of {record.parent_command_id}")
        if record.agent_note:
            out.append(f"     note: {record.agent_note}")
    if latest_failure is None:
        out.append("no failed commands in this file")
        return "\n".join(out)
    chain = retry_chain(records, latest_failure.command_id)
    out.append("")
    out.append(f"latest failure: {latest_failure.command_id} {_status(latest_failure)}")
    if latest_failure.error:
        out.append(f"  error: {latest_failure.error}")
    if len(chain) > 1:
        links = " -> ".join(f"{r.command_id} ({_status(r)})" for r in chain)
        out.append(f"  retry chain ({len(chain)} attempts): {links}")
    stderr_tail = latest_failure.stderr_tail.split("\n")[-stderr_lines:]
    if any(stderr_tail):
        out.append("  stderr tail:")
        out.extend(f"    {line}" for line in stderr_tail)
    return "\n".join(out)


def _tail(args: argparse.Namespace, stream: TextIO | None = None) -> int:
    from contextos_lab.harness.command_record import read_records

    stream = stream or sys.stdout
    path = Path(args.file) if args.file else default_record_path()
    if not path.is_file():
        raise UserError(f"no record file at {path}")
    loaded = read_records(path)
    if not loaded.records:  # empty or all malformed: nothing to show is not a success
        bad = f" ({len(loaded.malformed)} malformed line(s))" if loaded.malformed else ""
        raise UserError(f"{path}: no command records{bad}")
    color = not args.no_color and stream.isatty()
    print(render_tail(loaded.records, args.n, color=color), file=stream)
    for line in loaded.malformed:
        print(f"{path}:{line.line_no}: skipped malformed record: {line.message}", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    runs = add_command(
        subparsers,
        "runs",
        example="contextos-lab runs tail -n 5",
    )
    sub = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    tail = add_command(
        sub,
        "tail",
        help="latest records; the latest failure highlighted",
        example="contextos-lab runs tail -n 5 --no-color",
    )
    tail.add_argument(
        "file", nargs="?", help=f"record file (default {default_record_path()}, current only)"
    )
    tail.add_argument("-n", type=int, default=10, help="how many records to show (default 10)")
    tail.add_argument("--no-color", action="store_true", help="never colour the latest failure")
    tail.set_defaults(func=_tail, loads_project=False)  # reads a record file, no project
