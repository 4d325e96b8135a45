"""The one stderr line that says why a program failed, whatever language it is written in.

A runtime's crash report ends with boilerplate (Node prints `Node.js v20.x` after the stack),
so the last line hides the cause. Two tiers of lines say why:

* a line that *names* an error, first one wins (a stack follows it, and `Caused by` lines come
  later): Python/Node/Java/C# exception lines (`KeyError: 'x'`, `Error: ...`,
  `TypeError [ERR_X]: ...`, `Exception in thread "main" ...`, `Unhandled exception. ...`),
  Ruby's `file.rb:3:in 'm': message (NoMethodError)`, Go's `panic:` / `fatal error:`, Rust's
  `thread 'main' panicked at`, PHP's `PHP Fatal error:`, and any `error:` / `fatal:` header,
  bare or after a tool's name (`jq: error (at <stdin>:0): ...`);
* a line that *locates* a failure, last one wins (warnings come before the fatal one): Perl's
  `die` (`message at harness.pl line 12.`), a shell's `harness.sh: line 5: x: unbound variable`
  or `bash: x: command not found`, awk's `awk: cmd. line:1: ...`.

Without either, the last line that is not boilerplate. The whole tail stays in the command
record (`contextos-lab runs tail`).
"""

from __future__ import annotations

import re

#: A line that starts with an exception name (dotted, maybe `Uncaught`, a Node `[ERR_CODE]`),
#: or a crash header. Source lines (`throw new Error(...)`) do not start so.
_NAMES_ERROR = re.compile(
    r"^\s*(?:Uncaught\s+)?(?:[A-Za-z_][\w$]*\.)*[A-Za-z_$][\w$]*(?:Error|Exception|Exit|Fault)"
    r"(?:\s\[[^\]]*\])?(?::|$)"
    r"|^\s*(?:PHP\s+)?(?:panic|fatal error|fatal|parse error|error)(?:\[\w+\])?:"
    r"|^[\w./-]+: (?:fatal )?error\b"
    r"|^\s*Exception in thread\b"
    r"|^\s*Unhandled exception\b"
    r"|^thread '.*' panicked at"
    r"|^\S+:\d+:in [`'].*\((?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)?\)$",
    re.IGNORECASE,
)
#: A line that places a failure in a script: Perl's die/croak, a POSIX shell's, awk's.
_LOCATES_ERROR = re.compile(
    r"\bat \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.$"
    r"|^(?:\S*/)?(?:ba|z|da|k)?sh: "
    r"|^\S+\.(?:sh|bash): (?:line \d+: )?"
    r"|^(?:[gmn]?awk|busybox): "
)
#: Lines that never explain anything (a runtime's version banner, a traceback's header).
_NOISE = re.compile(r"^\s*(?:Node\.js v[\d.]+|Traceback \(most recent call last\):)\s*$")


def error_line(stderr: str, width: int = 200) -> str:
    """The first line naming an error, else the last line locating one, else the last line
    that is not boilerplate ('' if none); at most `width` characters."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    for line in lines:
        if _NAMES_ERROR.search(line):
            return line.strip()[:width]
    for line in reversed(lines):
        if _LOCATES_ERROR.search(line.strip()):
            return line.strip()[:width]
    meaningful = [ln for ln in lines if not _NOISE.match(ln)]
    return meaningful[-1].strip()[:width] if meaningful else ""
