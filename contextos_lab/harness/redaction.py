"""Secret redaction for command records (seed 003's patterns, widened to real forms).

A line (or argv element) matching a pattern, raw or on its `skeleton` (NFKC, zero-width removed,
look-alikes mapped to Latin), is replaced whole; so is the line after a bare key, and a line cut
short whose kept text ends in the start of a secret.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextos_lab.memory.skeleton import skeleton

#: Seed 003's patterns, widened to the forms secrets really take. A line (or argv element)
#: matching any of them, on its raw text or on its `skeleton` (NFKC, zero-width characters
#: removed, look-alike letters mapped to Latin, so a full-width `password=` or one with a
#: zero-width space inside matches too), is replaced whole by `[redacted: <name>]`.
_PW = r"(?:pass(?:word|wd|phrase)|pwd)"
_KEY = r"(?:api[_\- ]?key|apikey|access[_-]?key(?:[_-]?id)?|private[_-]?key)"
_SECRET = (
    r"(?:\w*secret(?:[_-]\w+)?|\w*token"
    r"|credentials?)"
)
_ASSIGN = r"\w*[\"']?\s*[:=]\s*[\"']?"  # `=`, `:`, spaces and quotes, JSON and YAML alike
_ASSIGN_EXACT = r"\b[\"']?\s*[:=]\s*[\"']?"  # the key ends here (`tokens: 100` is no key)
REDACTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"^\s*Bearer ", re.IGNORECASE)),
    ("bearer", re.compile(r"\bBearer\s+\S", re.IGNORECASE)),
    ("password", re.compile(r"password=", re.IGNORECASE)),
    ("password", re.compile(rf"\b\w*{_PW}{_ASSIGN}[^\s\"',;]", re.IGNORECASE)),
    ("api_key", re.compile(r"api[_-]?key=", re.IGNORECASE)),
    ("api_key", re.compile(rf"\b\w*{_KEY}{_ASSIGN}[^\s\"',;]", re.IGNORECASE)),
    ("secret", re.compile(rf"\b{_SECRET}{_ASSIGN_EXACT}[^\s\"',;]", re.IGNORECASE)),
    ("url_credentials", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:[^\s/@]+@", re.IGNORECASE)),
    (
        "aws_access_key",
        re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}"),
    ),
    ("aws_secret_key", re.compile(r"aws[_-]?secret", re.IGNORECASE)),
    (
        "slack_token",
        re.compile(r"xox[a-z]?[.-]|xapp-\d|hooks\.slack\.com/services/", re.IGNORECASE),
    ),
)
#: A line that ends in a key with no value (`Authorization: Bearer`, `password=`): the secret
#: is on the next line, which is redacted too.
BARE_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"\bBearer\s*$", re.IGNORECASE)),
    ("password", re.compile(rf"\w*{_PW}{_ASSIGN}\s*$", re.IGNORECASE)),
    ("api_key", re.compile(rf"\w*{_KEY}{_ASSIGN}\s*$", re.IGNORECASE)),
    ("secret", re.compile(rf"\b{_SECRET}{_ASSIGN_EXACT}\s*$", re.IGNORECASE)),
)
#: An argv flag whose value is the next element (`--password hunter2`, `--api-key K`).
SECRET_FLAG = re.compile(
    r"^-{1,2}[\w.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
    r"credentials?|auth)[\w.-]*$",
    re.IGNORECASE,
)

#: A line cut at `max_line_bytes` (before redaction) can end in the *start* of a secret whose
#: full pattern no longer matches, e.g. `AKIAIOSFODNN` of a 20-character AWS key. Rule: a cut
#: line whose kept text ends in a prefix of a match of a pattern above is replaced whole, from
#: the pattern's third character on (`Bea`, `pas`, `api`, `AKI`, `xox`; the one or two characters
#: before that are public and carry no secret). So no character of an AWS key body, a Slack
#: token or a value after `password=` / `api_key=` / `Bearer` survives a cut; a complete match
#: is caught by the patterns above as before. Names match `REDACTION_PATTERNS`.
CUT_PREFIX_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"\bBea(?:r(?:e(?:r\s*)?)?)?$", re.IGNORECASE)),
    ("password", re.compile(r"pas(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?$", re.IGNORECASE)),
    ("api_key", re.compile(r"api(?:[_-]?(?:k(?:e(?:y)?)?)?)?$", re.IGNORECASE)),
    ("aws_access_key", re.compile(r"AKI(?:A[0-9A-Z]{0,15})?$")),
    ("slack_token", re.compile(r"xox[a-z]?[.-]?\S*$")),
)


def redaction_hit(text: str) -> str | None:
    """Name of the first pattern `text` matches (per line, raw or normalised), or None."""
    for line in text.split("\n"):
        for form in _forms(line):
            for name, pattern in REDACTION_PATTERNS:
                if pattern.search(form):
                    return name
    return None


def _forms(line: str) -> tuple[str, ...]:
    normal = skeleton(line)
    return (line,) if normal == line else (line, normal)


def _bare_key(line: str) -> str | None:
    for form in _forms(line):
        for name, pattern in BARE_KEY_PATTERNS:
            if pattern.search(form):
                return name
    return None


def cut_secret_hit(kept: str) -> str | None:
    """Name of the pattern whose partial match `kept` (a line cut short) ends in, or None."""
    for name, pattern in CUT_PREFIX_PATTERNS:
        if pattern.search(kept):
            return name
    return None


_MARKER = re.compile(r"\[redacted: \w+\]")


def redact_text(text: str) -> str:
    """Every line that matches a pattern is replaced whole, and the line after one that ends
    in a bare key (`password=`, `Bearer`); the marker matches none."""
    lines = text.split("\n")
    carry: str | None = None
    for i, line in enumerate(lines):
        name = redaction_hit(line) or carry
        carry = _bare_key(line)
        if name is not None and not _MARKER.fullmatch(line):  # a marker stays as it was, so
            # redacting twice changes nothing even after a bare key (`BEARER` then a marker)
            lines[i] = f"[redacted: {name}]"
    return "\n".join(lines)


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Each element redacted as text, and the element after a secret flag (`--password v`)."""
    out = []
    after_flag = False
    for arg in argv:
        flagged = after_flag
        after_flag = bool(SECRET_FLAG.match(skeleton(arg))) and "=" not in arg
        out.append("[redacted: argv_secret]" if flagged else redact_text(arg))
    return tuple(out)
