"""Exit statuses of every command, and the root of every exception the kit raises.

Every kit exception subclasses `ContextosError` and carries its exit status as the class
attribute `exit_code` (an instance may narrow it: `code`), so the CLI maps errors to statuses in
one place (`contextos_lab.cli.app.main`) by type, never by message text. Library code raises
`UserError` for mistakes the user can fix (bad argument, missing, empty or
malformed input, a storage URL that cannot name anything) and `Unreachable` when a storage
server named correctly does not answer. The CLI's central handler (`contextos_lab.cli.app.main`)
prints either as one line on stderr and exits with its `code`. Notebook users see the same
message as an ordinary exception. Other failures (a bug, a broken dependency) keep their
tracebacks: they are not the user's to fix.

Exit statuses (README "Exit statuses" repeats this table; a scheduler may retry 3 and 4,
never 2 or 9):

    0  done (also when nothing was promoted: the command says so)
    1  `replay`: the proposal did not replay clean (a verdict, not an error)
    2  user error: bad option or value; missing, empty or malformed input; bad spec; a storage
       URL that cannot work as given (unknown scheme, missing folder or file, driver not
       installed); an unknown study
    3  storage unreachable: the study storage's or experience store's server does not answer
    4  harness unreachable: the baseline trial could not run
    5  the study exists with a different spec (resume refused)
    6  a notebook failed (its partial executed copy is kept; the path is printed)
    7  the held-out set overlaps the search set (at the spec check of `search` / `sweep` /
       `gate`, or in the gate itself: one rule, `contextos_lab.overlap`), or its error budget
       is spent
    8  the study vanished between the check and the gate notebook
    9  harness protocol error: the baseline failed on output that breaks the harness protocol
       (malformed JSON, an unknown or repeated case id, a wrong type); deterministic, never
       worth a retry (4 is: the harness did not run, hung or crashed)
"""

from __future__ import annotations

from typing import ClassVar

EXIT_USAGE = 2
EXIT_STORAGE, EXIT_HARNESS, EXIT_MISMATCH = 3, 4, 5
EXIT_NOTEBOOK, EXIT_HELDOUT, EXIT_NO_STUDY = 6, 7, 8
EXIT_PROTOCOL = 9
#: The table above, short, for `contextos-lab --help`.
EXIT_STATUSES = {
    0: "done",
    1: "replay not clean",
    2: "user error",
    3: "storage unreachable",
    4: "harness unreachable",
    5: "study has a different spec",
    6: "notebook failed",
    7: "held-out overlap or budget spent",
    8: "study vanished",
    9: "harness protocol error",
}


class ContextosError(Exception):
    """The root of every exception the kit raises; `exit_code` is its exit status (table
    above), `code` this instance's (the class's unless the raiser narrowed it)."""

    exit_code: ClassVar[int] = EXIT_USAGE
    _code: int | None = None  # class default: a subclass may skip this __init__ (a mixin)

    def __init__(self, *args: object, code: int | None = None) -> None:
        super().__init__(*args)
        self._code = code

    @property
    def code(self) -> int:
        return self.exit_code if self._code is None else self._code

    def one_line(self) -> str:
        return one_line(str(self))


class ExitError(ContextosError):
    """An error a notebook shows as one line, like the CLI: the user's to fix, not a bug."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message, code=code)

    def _render_traceback_(self) -> list[str]:
        """What IPython shows in a notebook: the one line, no traceback (still an error, so
        Run All and papermill stop here)."""
        return [f"{type(self).__name__}: {self.one_line()}"]


class JobError(ContextosError):
    """A refused or failed step of a scheduled job (`gate`, `sweep`), with its exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message, code=code)


class MissingPrerequisite(ExitError):
    """An input a notebook or command needs is absent: where it was looked for and what to run
    to make it."""


class UserError(ExitError):
    """A mistake the user can fix; `str(exc)` is the whole message, `code` the exit status."""


class MissingDependency(UserError, RuntimeError):
    """An optional extra the call needs is not installed; the message names the extra."""


class Unreachable(ExitError):
    """A storage server, named correctly, that does not answer (retrying may help)."""

    exit_code = EXIT_STORAGE


def one_line(message: object) -> str:
    """A message on one line: continuation lines joined with ' | ', blank ones dropped."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    return " | ".join(lines) if lines else type(message).__name__
