"""Secrets that span lines or arguments: which lines (argv elements) a secret covers.

A scanner reads one line; a secret does not always fit on one. These rules find the neighbours
a secret spills into, given the per-line detectors as functions (so this module knows no
pattern): the line after a bare key (`Authorization: Bearer` / next line), backslash-continued
lines (scanned joined), a YAML block value under a secret key (`password: |`), the body of a
private key up to its END line; in argv, the value after a secret flag, after `-u`/`--user`,
after an element ending in a bare key (`-H 'Authorization: Bearer' TOKEN`), and both
halves of a token split across two elements (CLI password flags: `argv_passwords`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from contextos_lab.memory.skeleton import skeleton

Detector = Callable[[str], str | None]

_BLOCK = re.compile(r"^(?P<key>\s*.*?:)\s*[|>][-+]?\d*\s*$")
_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY")
_MARKER = re.compile(r"\[redacted: \w+\]")
_USER_FLAG = re.compile(r"^(?:-u|--user|--proxy-user)$")
_FRAGMENT = re.compile(r"[A-Za-z0-9_]{4,}")


def split_words(command: str) -> list[str]:
    """A command line's arguments as a shell would split them (plain split if unbalanced)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continued(lines: Sequence[str]) -> list[range]:
    """Runs of lines joined by a trailing backslash (the last line of a run has none)."""
    runs, start = [], None
    for i, line in enumerate(lines):
        if line.rstrip().endswith("\\"):
            start = i if start is None else start
        elif start is not None:
            runs.append(range(start, i + 1))
            start = None
    if start is not None:
        runs.append(range(start, len(lines)))
    return runs


def spans(
    lines: Sequence[str],
    hit: Detector,
    bare: Detector,
    argv: Callable[[Sequence[str]], dict[int, str]] | None = None,
) -> dict[int, str]:
    """Index -> detector name of every line a secret covers. A backslash-continued run is a
    command split over lines, so its words are also checked as an argv by `argv`."""
    out: dict[int, str] = {}
    for i, line in enumerate(lines):
        if _MARKER.fullmatch(line):
            continue
        name = hit(line)
        if name is not None:
            out[i] = name
        carried = bare(line)
        if carried is not None and i + 1 < len(lines):
            out.setdefault(i + 1, carried)
    for run in _continued(lines):
        parts = [lines[i].rstrip().removesuffix("\\") for i in run]
        name = next((out[i] for i in run if i in out), None)
        name = name or hit(" ".join(parts)) or hit("".join(p.strip() for p in parts))
        if name is None and argv is not None:
            words = split_words(" ".join(parts))
            name = next(iter(argv(words).values()), None)
        if name is not None:
            out.update(dict.fromkeys(run, name))
    i = 0
    while i < len(lines):
        block = _BLOCK.match(lines[i])
        if block and bare(block["key"]) is not None:
            name, depth, j = bare(block["key"]) or "secret", _indent(lines[i]), i + 1
            out[i] = name
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > depth):
                if lines[j].strip():
                    out[j] = name
                j += 1
            i = j
            continue
        if _PEM_BEGIN.search(skeleton(lines[i])) and not _PEM_END.search(lines[i]):
            j = i
            while j < len(lines):
                out[j] = "private_key"
                if _PEM_END.search(skeleton(lines[j])):
                    break
                j += 1
            i = j + 1
            continue
        i += 1
    return out


def argv_spans(
    argv: Sequence[str], hit: Detector, bare: Detector, flag: re.Pattern[str], token: Detector
) -> dict[int, str]:
    """Index -> detector name of every argv element a secret covers beyond its own text."""
    out: dict[int, str] = {}
    for i, arg in enumerate(argv):
        form = skeleton(arg)
        if i + 1 >= len(argv):
            continue
        if flag.match(form) and "=" not in form:
            out[i + 1] = "argv_secret"
        elif _USER_FLAG.match(form) and ":" in argv[i + 1]:
            out[i + 1] = "password"
        elif not _MARKER.fullmatch(arg) and hit(arg) is None and bare(arg) is not None:
            out[i + 1] = bare(arg) or "secret"
        a, b = form.strip(), skeleton(argv[i + 1]).strip()
        if a and b and token(b) is None:
            # A token split in two (`AKIAIOSF` `ODNN7EXAMPLE`): the halves match only joined,
            # or the first half already matches and the second is a bare continuation of it.
            joined = token(a + b)
            if joined is not None and (token(a) is None or _FRAGMENT.fullmatch(b)):
                out[i] = out[i + 1] = joined
    return out
