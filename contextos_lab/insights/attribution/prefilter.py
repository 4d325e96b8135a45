"""A regular expression searched only in texts that hold one of the literals it needs.

The content signals (`signals`) are case-insensitive alternations led by `\\b`; Python's `re`
tries each of them at every position of every turn, about 0.3 s per MB of log text each, which
was most of the time spent per trace on a corpus (issue 39). Nearly every turn contains none of
a pattern's literal words, and a substring test runs in C at memory speed, so the regex runs
only where one of its required literals occurs: the same answer, many times faster.

The literals are derived from the pattern's own parse tree, never listed by hand, so they stay
sound when a pattern changes: each top-level alternative contributes a run of literal
characters (or a required group's alternatives) that every match of it must contain; a pattern
for which that cannot be shown keeps the plain regex. Case-insensitive patterns are tested on
the case-folded text, with the two letters `re.IGNORECASE` matches to ``i`` that `str.casefold`
does not fold to it (``İ``, ``ı``) mapped first (tests/insights/attribution/test_prefilter.py
checks every code point). Hand-written because `re` has no such prefilter and the faster
engines (RE2, Hyperscan) lack the look-behinds and Unicode `\\b` the signals are defined with.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]  # stable since 3.11
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

#: Shortest literal worth testing for (shorter ones are found in nearly every text).
MIN_NEEDLE = 3
#: The text last folded and its fold: a turn is searched by several patterns in a row.
_last: tuple[str, str] = ("", "")
_DOTTED_I = {0x130: "i", 0x131: "i"}
_SUPPORTED_FLAGS = re.IGNORECASE | re.UNICODE | re.DOTALL | re.MULTILINE


def fold(text: str) -> str:
    """`text` as a case-insensitive pattern's literals are compared with it."""
    global _last
    last = _last  # one read: another thread may replace it meanwhile
    if last[0] is text:
        return last[1]
    ascii_text = text.isascii()  # then lower() is casefold()
    folded = text.lower() if ascii_text else text.translate(_DOTTED_I).casefold()
    _last = (text, folded)
    return folded


def _sequence(items: Any) -> frozenset[str] | None:
    """Literals one of which every match of this sequence contains (None: cannot tell)."""
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    for op, arg in items:
        if op is sre.LITERAL:
            run.append(chr(arg))
            continue
        if op is sre.AT:  # zero-width: the literals either side are still adjacent
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        if op is sre.BRANCH:
            consider(_branch(arg[1]))
        elif op is sre.SUBPATTERN and not arg[1] and not arg[2]:  # no inline flags
            consider(_sequence(arg[3]))
    consider(frozenset({"".join(run)}) if run else None)
    if best is None or min(map(len, best)) < MIN_NEEDLE:
        return None
    return best


def _branch(alternatives: Any) -> frozenset[str] | None:
    found: set[str] = set()
    for alternative in alternatives:
        needles = _sequence(alternative)
        if needles is None:
            return None
        found |= needles
    return frozenset(found)


def needles(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Literals one of which every match of `pattern` contains (case-folded when the pattern
    ignores case), or None when that cannot be shown from its parse tree."""
    if pattern.flags & ~_SUPPORTED_FLAGS:
        return None
    found = _sequence(sre_parse.parse(pattern.pattern, pattern.flags))
    if found is None:
        return None
    if pattern.flags & re.IGNORECASE:
        if not all(n.isascii() for n in found):  # folding shown sound for ASCII letters only
            return None
        found = frozenset(fold(n) for n in found)
    return found


class Prefiltered:
    """`pattern.search`, skipped (None) when the text holds none of its required literals."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.regex = pattern
        self.pattern = pattern.pattern
        self.needles = needles(pattern)
        self._fold = bool(pattern.flags & re.IGNORECASE)

    def search(self, text: str) -> re.Match[str] | None:
        if self.needles is not None:
            hay = fold(text) if self._fold else text
            if not any(n in hay for n in self.needles):
                return None
        return self.regex.search(text)

    def __repr__(self) -> str:
        return f"Prefiltered({self.regex!r}, needles={sorted(self.needles or ())})"


__all__ = ["MIN_NEEDLE", "Prefiltered", "fold", "needles"]
