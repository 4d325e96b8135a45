"""The one exception type for mistakes a user can fix (bad argument, missing or empty input).

Library code raises `UserError` with a message that names the file/flag and what is wrong; the
CLI's central handler (`contextos_lab.cli.main`) prints it as one line on stderr and exits 2.
Notebook users see the same message as an ordinary exception. Other failures (a bug, a broken
dependency) keep their tracebacks: they are not the user's to fix.
"""

from __future__ import annotations

#: The exit status of every user error (argparse uses 2 for usage errors too).
EXIT_USAGE = 2


class UserError(Exception):
    """A mistake the user can fix; `str(exc)` is the whole message, `code` the exit status."""

    def __init__(self, message: str, *, code: int = EXIT_USAGE) -> None:
        self.code = code
        super().__init__(message)

    def one_line(self) -> str:
        return one_line(str(self))


def one_line(message: object) -> str:
    """A message on one line: continuation lines joined with ' | ', blank ones dropped."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    return " | ".join(lines) if lines else type(message).__name__
