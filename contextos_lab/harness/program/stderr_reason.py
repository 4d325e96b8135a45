"""The one stderr line that says why a program failed.

A runtime's crash report ends with boilerplate (Node prints `Node.js v20.x` after the stack),
so the last line hides the cause. The first line that *names* an error (`TypeError: ...`,
`KeyError: 'x'`, `panic: ...`, `Exception in thread ...`) is the one a reader needs; the whole
tail stays in the command record (`contextos-lab runs tail`).
"""

from __future__ import annotations

import re

#: A line that starts with an exception name (dotted, maybe `Uncaught`, a Node `[ERR_CODE]`),
#: or a Go/Rust/Java crash header. Source lines (`throw new Error(...)`) do not start so.
_ERROR_LINE = re.compile(
    r"^\s*(?:Uncaught\s+)?(?:[A-Za-z_][\w$]*\.)*[A-Za-z_$][\w$]*(?:Error|Exception|Exit|Fault)"
    r"(?:\s\[[^\]]*\])?(?::|$)"
    r"|^\s*(?:panic|fatal error|error)(?:\[\w+\])?:"
    r"|^\s*Exception in thread\b"
    r"|^thread '.*' panicked at",
    re.IGNORECASE,
)
#: Lines that never explain anything (a runtime's version banner, a traceback's header).
_NOISE = re.compile(r"^\s*(?:Node\.js v[\d.]+|Traceback \(most recent call last\):)\s*$")


def error_line(stderr: str, width: int = 200) -> str:
    """The first line naming an error, else the last line that is not boilerplate ('' if none)."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    for line in lines:
        if _ERROR_LINE.search(line):
            return line.strip()[:width]
    meaningful = [ln for ln in lines if not _NOISE.match(ln)]
    return meaningful[-1].strip()[:width] if meaningful else ""
