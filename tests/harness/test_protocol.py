"""A results row's `fault` is typed: missing says no fault, a known value is a `Fault`, and any
other text is the harness's breach, a one-line kit error naming where, the field and the value
(it was a raw `ValueError` and a traceback out of `search`)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.errors import EXIT_PROTOCOL, ContextosError
from contextos_lab.harness.protocol import Fault, UnknownFault, fault_of


@pytest.mark.parametrize("missing", [None, "", math.nan, 3])
def test_a_missing_fault_is_none(missing: object) -> None:
    assert fault_of(missing) is None


def test_a_known_fault_is_typed() -> None:
    assert fault_of("protocol") is Fault.protocol


def test_an_unknown_fault_names_where_the_field_and_the_value() -> None:
    with pytest.raises(UnknownFault) as caught:
        fault_of("timeout", "harness.py (harness h:H): case 'c1', repeat 0")
    error = caught.value
    assert isinstance(error, ContextosError) and error.code == EXIT_PROTOCOL
    message = error.one_line()
    assert message.startswith("harness.py (harness h:H): case 'c1', repeat 0: field `fault`:")
    assert "'timeout'" in message and "'protocol'" in message


@given(st.text(min_size=1))
def test_any_text_is_a_fault_or_the_kit_s_error(text: str) -> None:
    try:
        assert fault_of(text) is Fault(text)
    except UnknownFault as exc:
        assert repr(text) in str(exc)
