"""Secret redaction for command records: detect-secrets' plugins plus the kit's own patterns.

A line (or argv element) in which detect-secrets (`secret_scan`) or a kit pattern finds a
secret, raw or on its `skeleton` (NFKC, zero-width removed, look-alikes mapped to Latin), is
replaced whole. Secrets that span lines or arguments are followed too (`redaction_context`):
the line after a bare key, backslash-continued lines, YAML block values (`password: |`),
private-key bodies, `.netrc` entries, and the argv element after `-H 'Authorization: Bearer'`,
`-u`, a secret flag, or that completes a token split across two arguments. A line cut short
whose kept text ends in the start of a secret is replaced too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from contextos_lab.harness.argv_passwords import password_spans
from contextos_lab.harness.credsweeper_scan import credsweeper_hit
from contextos_lab.harness.redaction_context import argv_spans, spans, split_words
from contextos_lab.harness.secret_scan import plain_assignment, scanner_hit, token_hit
from contextos_lab.harness.token_shapes import prefixed_token_hit
from contextos_lab.memory.skeleton import skeleton

#: The kit's patterns, for what detect-secrets lacks (bearer and basic headers, passwords in
#: URLs without a scheme or with a `/`, `DB_PASS=`, `curl -u`, `mysql -p`, `.netrc`, Google
#: keys, fine-grained GitHub tokens, mixed-case AWS ids), plus seed 003's own. A line (or argv
#: element) matching any of them, on its raw text or on its `skeleton` (NFKC, zero-width characters
#: removed, look-alike letters mapped to Latin, so a full-width `password=` or one with a
#: zero-width space inside matches too), is replaced whole by `[redacted: <name>]`.
_PW = r"(?:pass(?:word|wd|phrase)|pwd|(?<=[_.\-])pass(?![a-z]))"  # `DB_PASS`, not `pass_k`
_KEY = r"(?:api[_\- ]?key|apikey|access[_-]?key(?:[_-]?id)?|private[_-]?key)"
_SECRET = (
    r"(?:\w*secret(?:[_-]\w+)?|\w*token"
    r"|credentials?)"
)
_ASSIGN = r"\w*[\"']?\s*(?::=|=>|[:=])\s*[\"']?"  # `=`, `:`, spaces and quotes, JSON and YAML alike
_ASSIGN_EXACT = r"\b[\"']?\s*(?::=|=>|[:=])\s*[\"']?"  # the key ends here (`tokens: 100` is no key)
REDACTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"^\s*Bearer ", re.IGNORECASE)),
    # mid-line, a credential-looking token must follow (`Bearer token expired` is prose)
    (
        "bearer",
        re.compile(
            r"\bBearer\s+(?:[\w\-.~+/]{16,}|(?=[A-Za-z]*[\d\-.~+/])[\w\-.~+/]{10,})=*",
            re.IGNORECASE,
        ),
    ),
    ("password", re.compile(r"password=", re.IGNORECASE)),
    ("password", re.compile(rf"\b\w*{_PW}{_ASSIGN}[^\s\"',;=]", re.IGNORECASE)),
    ("api_key", re.compile(r"api[_-]?key=", re.IGNORECASE)),
    ("api_key", re.compile(rf"\b\w*{_KEY}{_ASSIGN}[^\s\"',;=]", re.IGNORECASE)),
    ("secret", re.compile(rf"\b{_SECRET}{_ASSIGN_EXACT}[^\s\"',;=]", re.IGNORECASE)),
    ("url_credentials", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:[^\s@]+@", re.IGNORECASE)),
    # `user:pass@host` with no scheme (`mysql -h`, `DATABASE_URL=admin:pw@db:5432`)
    ("url_credentials", re.compile(r"(?<![\w/@])[\w.%+\-]*:[^\s:@/]{2,}@[\w\-]+(?:\.[\w\-]+)+")),
    (
        "aws_access_key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])",
            re.IGNORECASE,  # a mixed-case `Akia...` is the same key, disguised
        ),
    ),
    ("authorization", re.compile(r"\bAuthori[sz]ation\s*[:=]\s*[\"']?\w+\s+\S", re.IGNORECASE)),
    ("authorization", re.compile(r"\b(?:Basic|token|Digest)\s+[A-Za-z0-9+/=_.\-]{12,}")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("google_api_key", re.compile(r"AIza[0-9A-Za-z_\-]{30,}")),
    ("stripe_key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{10,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.")),
    ("private_key", re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY")),
    ("password", re.compile(r"(?:^|\s)(?:-u|--user)[\s=]*['\"]?[^\s:'\"]+:[^\s'\"]+")),
    ("password", re.compile(r"\b(?:mysql\w*|mariadb\w*)\b.*\s-p['\"]?[^\s'\"]{2,}", re.IGNORECASE)),
    ("password", re.compile(r"\b(?:machine|login|default)\b.*\bpassword\s+\S", re.IGNORECASE)),
    ("password", re.compile(r"^\s*password\s+\S+\s*$", re.IGNORECASE)),
    # prose: `the password is Tr0ub4dor&3` (a value with a digit or symbol; `is required` is not)
    (
        "password",
        re.compile(
            r"\bpass(?:word|phrase)\s+(?:is|was|=|:)\s+['\"]?(?=\S*[\d!@#$%^&*])\S{4,}",
            re.IGNORECASE,
        ),
    ),
    # .pgpass: host:port:database:user:password
    ("password", re.compile(r"^\s*[\w.\-*]+:(?:\d+|\*):[\w.\-*]+:[\w.\-*]+:\S+\s*$")),
    # tools whose short flag takes a password: sshpass -p, redis-cli -a, docker/podman/az login -p
    ("password", re.compile(r"\bsshpass\s+-p\s*\S+")),
    ("password", re.compile(r"\bredis-cli\b.*\s-a\s+\S+")),
    ("password", re.compile(r"\b(?:docker|podman|az|helm registry)\s+login\b.*\s-p\s+\S+")),
    ("password", re.compile(r"\bmongo(?:sh|dump|restore)?\b.*\s-p\s+\S+")),
    ("password", re.compile(r"-pass(?:in|out)?\s+pass:\S+")),
    ("secret", re.compile(r"(?:^|[\s;])_auth(?:token)?\s*[:=]\s*\S{8,}", re.IGNORECASE)),
    ("aws_secret_key", re.compile(r"aws[_-]?secret", re.IGNORECASE)),
    (
        "slack_token",
        re.compile(r"xox[a-z]?[.-]|xapp-\d|hooks\.slack\.com/services/", re.IGNORECASE),
    ),
)
#: A line that ends in a key with no value (`Authorization: Bearer`, `password=`): the secret
#: is on the next line, which is redacted too.
BARE_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"\bBearer\s*['\"]?\s*$", re.IGNORECASE)),
    ("authorization", re.compile(r"\bAuthori[sz]ation\s*[:=]\s*(?:\w+\s*)?['\"]?\s*$", re.I)),
    ("password", re.compile(r"^\s*(?:password|passwd)\s*$", re.IGNORECASE)),
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
    """Name of the first detector that finds a secret in `text` (per line, raw or normalised),
    or None. Layers, cheapest first: the kit's patterns, detect-secrets' plugins, the vendor
    token design (`token_shapes`), a command line's password arguments (`argv_passwords`),
    then CredSweeper's rules and ML validator (`credsweeper_scan`)."""
    for line in text.split("\n"):
        if _MARKER.fullmatch(line):
            continue
        for form in _forms(line):
            for name, pattern in REDACTION_PATTERNS:
                match = pattern.search(form)
                if match and (name not in _ASSIGNMENTS or plain_assignment(form, match.start())):
                    return name
        found = scanner_hit(line) or _layered(line)
        if found is not None:
            return found
    return None


def _layered(line: str) -> str | None:
    for form in _forms(line):
        found = prefixed_token_hit(form)
        if found is None:
            found = _command_line_hit(split_words(form))
        found = found or credsweeper_hit(form)
        if found is not None:
            return found
    return None


def _command_line_hit(words: Sequence[str]) -> str | None:
    """A line read as a command (`+ wget --http-password PW URL` echoed to stdout): a CLI's
    password argument, or the value after a secret flag."""
    found = next(iter(password_spans(words).values()), None)
    if found is not None:
        return found
    for flag, value in pairwise(words):
        if SECRET_FLAG.match(flag) and "=" not in flag and not value.startswith("-"):
            return "argv_secret"
    return None


def _forms(line: str) -> tuple[str, ...]:
    normal = skeleton(line)
    return (line,) if normal == line else (line, normal)


def bare_key(line: str) -> str | None:
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


#: Kit patterns for `key = value`: their value must be a literal (`plain_assignment`).
_ASSIGNMENTS = frozenset({"password", "api_key", "secret"})
#: Kit patterns that match a token's shape alone (checked on two argv elements joined).
_TOKEN_NAMES = ("aws_access_key", "github_token", "google_api_key", "stripe_key", "openai_key")


def _token(text: str) -> str | None:
    for name, pattern in REDACTION_PATTERNS:
        if name in _TOKEN_NAMES and pattern.search(text):
            return name
    return token_hit(text)


def redact_text(text: str) -> str:
    """Every line in which a secret is found is replaced whole, with the lines a secret spans
    (`redaction_context.spans`); a marker is left as it is, so redacting twice changes nothing."""
    lines = text.split("\n")
    for i, name in spans(lines, redaction_hit, bare_key, _argv_hits).items():
        if not _MARKER.fullmatch(lines[i]):
            lines[i] = f"[redacted: {name}]"
    return "\n".join(lines)


def _argv_hits(argv: Sequence[str]) -> dict[int, str]:
    return password_spans(argv) | argv_spans(argv, redaction_hit, bare_key, SECRET_FLAG, _token)


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Each element redacted as text, and the elements a secret spans: the value after a
    secret flag (`--password v`), a bare key (`-H 'Authorization: Bearer' v`), `-u`, and both
    halves of a token split across two elements."""
    hits = _argv_hits(argv)
    return tuple(
        f"[redacted: {hits[i]}]" if i in hits and not _MARKER.fullmatch(arg) else redact_text(arg)
        for i, arg in enumerate(argv)
    )
