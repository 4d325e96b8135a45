"""The lone-surrogate check, now done in C, says what the character-by-character one said."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.loaders.hazards import find_hazard, has_surrogate

#: Any code point, lone surrogates included (`st.text()` leaves them out by default).
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())


@settings(deadline=None, max_examples=60)  # a shared CPU: no timing in tests
@given(st.text(alphabet=ANY_CHAR, max_size=40))
def test_has_surrogate_agrees_with_the_definition(text: str) -> None:
    assert has_surrogate(text) == any("\ud800" <= ch <= "\udfff" for ch in text)


def test_a_surrogate_is_still_found_with_its_field() -> None:
    assert has_surrogate("é\udc00") and not has_surrogate("é😀") and not has_surrogate("")
    assert find_hazard({"a": ["ok", "x\ud800"]}) == (
        "a.1",
        "text holds a lone UTF-16 surrogate (not valid Unicode)",
    )
