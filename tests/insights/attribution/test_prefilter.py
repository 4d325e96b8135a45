"""The literal prefilter answers exactly as the regex it guards (`attribution.prefilter`)."""

from __future__ import annotations

import re
import string
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.prefilter import Prefiltered, fold, needles

GUARDED = [
    getattr(sig, name)
    for name in dir(sig)
    if name.isupper() and isinstance(getattr(sig, name), Prefiltered)
]
WORDS = sorted({n for p in GUARDED for n in p.needles or ()} | {"Error", "İ", "ı", "K"})


def test_the_signals_searched_by_content_are_guarded() -> None:
    assert {p.pattern for p in GUARDED} >= {sig.ERROR.pattern, sig.CONTRADICT.pattern}
    assert all(p.needles for p in GUARDED), [p for p in GUARDED if not p.needles]


def test_folding_keeps_every_letter_ignorecase_matches_to_an_ascii_letter() -> None:
    """The premise of comparing folded text with ASCII literals, over every code point."""
    every = "".join(chr(cp) for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF)
    for ch in re.findall("[a-z]", every, re.IGNORECASE):
        for c in string.ascii_lowercase:
            if re.fullmatch(c, ch, re.IGNORECASE):
                assert fold(f"x{ch}y") == f"x{c}y", (hex(ord(ch)), c)


def test_a_pattern_without_a_required_literal_is_searched_plainly() -> None:
    p = Prefiltered(re.compile(r"\d+|ab"))
    assert p.needles is None and needles(re.compile(r"a?bcd")) == frozenset({"bcd"})
    assert p.search("x 42")[0] == "42"  # type: ignore[index]


def _spans(pattern: Prefiltered, text: str) -> tuple[int, int] | None:
    found = pattern.search(text)
    return None if found is None else found.span()


@settings(max_examples=15, deadline=None)
@given(st.data(), st.sampled_from(GUARDED))
def test_a_text_matching_the_pattern_passes_the_prefilter(data: st.DataObject, p: Any) -> None:
    text = data.draw(st.from_regex(p.regex))
    assert p.search(text) is not None
    assert _spans(p, text) == p.regex.search(text).span()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=8),
    st.sampled_from(GUARDED),
)
def test_the_same_answer_as_the_regex(parts: list[str], p: Any) -> None:
    for text in (" ".join(parts), " ".join(parts).upper()):
        want = p.regex.search(text)
        assert _spans(p, text) == (None if want is None else want.span())


@pytest.mark.parametrize("text", ["TRACEBACK (MOST RECENT CALL LAST)", "KeyError: 'x'", "ok"])
def test_examples(text: str) -> None:
    assert bool(sig.ERROR.search(text)) == bool(sig.ERROR.regex.search(text))
