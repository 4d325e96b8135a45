"""Text as it reads, not as it is spelled: the form instruction detection and redaction match on.

An attacker (or an unlucky copy-paste) can hide `password=` or "ignore previous instructions"
from a plain regex with full-width forms (`ｐａｓｓｗｏｒｄ`), zero-width or bidi control characters
(`pass\\u200bword`) or look-alike letters from other scripts (Cyrillic `а` for Latin `a`).
`skeleton` undoes all three: Unicode NFKC, format characters removed, and each character that
Unicode's confusables table (TR39, via the maintained `confusable_homoglyphs` package) lists as
a look-alike of a Latin letter or digit mapped to it. Case is kept (patterns decide).
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

#: Categories never shown as ink: format (zero-width, bidi), line/paragraph separators, ...
_INVISIBLE = frozenset({"Cf", "Cc", "Zl", "Zp", "Cs", "Co", "Cn"})
_VARIATION_SELECTORS = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))


@lru_cache(maxsize=4096)
def _latin_lookalike(ch: str) -> str:
    """The ASCII letter or digit `ch` is confusable with, else `ch` itself."""
    found = confusables.is_confusable(ch, preferred_aliases=["latin", "common"], greedy=True)
    for hit in found or ():
        for glyph in hit.get("homoglyphs", ()):
            c = glyph.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalnum():
                return c
    return ch


def _hidden(ch: str) -> bool:
    if ch in "\n\t":
        return False
    code = ord(ch)
    if any(code in r for r in _VARIATION_SELECTORS):
        return True
    return unicodedata.category(ch) in _INVISIBLE


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def skeleton(text: str) -> str:
    """NFKC, invisible characters removed, Latin look-alikes mapped to Latin (case kept)."""
    if text.isascii():  # NFKC and the look-alike map leave ASCII as it is: only controls go
        return _ASCII_CONTROL.sub("", text)
    folded = unicodedata.normalize("NFKC", text)
    out = []
    for ch in folded:
        if _hidden(ch):
            continue
        out.append(ch if ch.isascii() else _latin_lookalike(ch))
    return "".join(out)


def quoted_line(text: str) -> str:
    """`text` as one double-quoted line: quotes, backslashes, newlines and every invisible or
    line-breaking character escaped (`\\n`, `\\u2028`, `\\u200b`), so it cannot leave its line
    or its quotes however it was written."""
    body = json.dumps(text, ensure_ascii=False)
    return "".join(
        _escape(ch) if ord(ch) > 0x7E and unicodedata.category(ch) in _INVISIBLE else ch
        for ch in body
    )


def _escape(ch: str) -> str:
    """JSON's `\\uXXXX`, as a surrogate pair above the Basic Multilingual Plane."""
    return json.dumps(ch)[1:-1] if ord(ch) > 0xFFFF else f"\\u{ord(ch):04x}"
