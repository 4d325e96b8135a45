"""Vendor tokens by their general shape: a short prefix, a separator, then a random body.

Vendors that issue API keys almost all follow one documented design (GitHub's `ghp_`, GitLab's
`glpat-`, DigitalOcean's `dop_v1_`, Sentry's `sntryu_`, Neon's `napi_`, age's
`AGE-SECRET-KEY-1`, ...): a prefix naming the vendor and kind, a separator (`_ - . $`), and a
body of random characters from one alphabet. A scanner with a rule per vendor misses every
vendor it has no rule for; this module states the design instead, so a vendor nobody listed is
caught as long as it follows it. A body is random by its alphabet:

- hex: at least 32 digits (a key of 128 bits or more) — unless the prefix names a digest or an
  id (`sha256-`, `blake2b-`, `commit_`, `trace-`, `etag.`): a named hash is public;
- upper case and digits, or lower case and digits: at least 20 (24 for lower case) with at
  least 3 letters and 3 digits, and a Shannon entropy near the most its length allows;
- mixed case: at least 20 with upper, lower and digits.

A UUID (`pvc-<uuid>`, `sdk-<uuid>`) is an id, not a key, and pod names, versions and wheel
names have bodies too short or too regular. detect-secrets and CredSweeper run first; this
catches what their per-vendor rules lack.
"""

from __future__ import annotations

import math
import re
from collections import Counter

#: A run of alphanumeric segments joined by token separators (`_ - . $ ~`).
_RUN = re.compile(r"(?<![A-Za-z0-9_.\-/$~+])[A-Za-z0-9]+(?:[_\-.$~][A-Za-z0-9]+)+")
_SEPARATORS = re.compile(r"[_\-.$~]")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
#: Prefix words naming a digest or an identifier: what follows them is public.
_PUBLIC_PREFIX = re.compile(
    r"^(?:sha\d*|md5|blake\w*|xxh\w*|crc\d*|murmur\w*|digest|hash|checksum|etag|"
    r"commit|rev|git|g|trace|span|request|req|id|uuid|ulid|build|cache|object|blob|tree|"
    r"integrity|fingerprint|sum)$",
    re.IGNORECASE,
)
_HEX = re.compile(r"[0-9a-fA-F]+")


def public_prefix(word: str) -> bool:
    """Whether `word` (a run's segment) names a digest or an identifier (`sha256`, `commit`,
    `trace`, `object`, ...), so the segment after it is public by the design."""
    return _PUBLIC_PREFIX.search(word) is not None


def _entropy_share(text: str) -> float:
    """Shannon entropy of `text` as a share of the most its length allows (log2 of length)."""
    counts = Counter(text)
    n = len(text)
    bits = -sum(c / n * math.log2(c / n) for c in counts.values())
    return bits / math.log2(min(n, 64))


def _random_body(body: str) -> bool:
    digits = sum(c.isdigit() for c in body)
    upper = sum(c.isupper() for c in body)
    lower = sum(c.islower() for c in body)
    if _HEX.fullmatch(body) and (not upper or not lower):
        return len(body) >= 32 and len(set(body)) >= 10
    if upper and lower:
        return len(body) >= 20 and digits > 0 and _entropy_share(body) >= 0.75
    letters = upper or lower
    least = 24 if lower else 20
    return len(body) >= least and letters >= 3 and digits >= 3 and _entropy_share(body) >= 0.75


def prefixed_token_hit(line: str) -> str | None:
    """`vendor_token` when `line` holds a token of the prefix-separator-random-body design:
    a run whose first segment is a short prefix (16 characters at most) and one of whose
    later segments is a random body; a run holding a UUID, or a prefix naming a digest or an
    id, is public."""
    for match in _RUN.finditer(line):
        run = match.group(0)
        if _UUID.search(run):
            continue
        segments = _SEPARATORS.split(run)
        if len(segments[0]) > 16:
            continue
        for k in range(1, len(segments)):
            if public_prefix(segments[k - 1]):
                break
            if _random_body(segments[k]):
                return "vendor_token"
    return None
