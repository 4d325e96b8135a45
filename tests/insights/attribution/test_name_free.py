"""The name-free fallback: roles and writes read from the layout where names say nothing, and
never where they do (docs/failure_attribution.md, "With the names hidden")."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.name_free import (
    READ_VERBS,
    call_verb,
    name_words,
    write_calls,
)
from contextos_lab.insights.attribution.run_events import roles, run_signals
from contextos_lab.insights.attribution.turns import RunTrace, Turn

#: Lower-case words that are no known verb (objects of a call).
OBJECTS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8).filter(
    lambda w: w not in sig.WRITE_VERBS | READ_VERBS
)
Shape = Callable[[str, str], str]
SHAPES: tuple[Shape, ...] = (
    lambda v, o: f"{v}_{o}",
    lambda v, o: f"{v}{o.capitalize()}",
    lambda v, o: f"{v.capitalize()}{o.capitalize()}",
    lambda v, o: f"{o}.{v}",
    lambda v, o: f"api/{o}/{v}",
    lambda v, o: f"{v}-{o}",
    lambda v, o: f"{o}::{v}_{o}",
    lambda v, o: f"{o}_{v}",
    lambda v, o: f"{o}{v.capitalize()}",
)


def _run(*turns: tuple[str, str] | tuple[str, str, str]) -> RunTrace:
    """Turns as (speaker, content) or (speaker, content, tool)."""
    return RunTrace(
        "r", tuple(Turn(i, t[0], t[1], t[2] if len(t) > 2 else None) for i, t in enumerate(turns))
    )


@given(st.sampled_from(sorted(sig.WRITE_VERBS)), OBJECTS, st.sampled_from(SHAPES))
def test_a_write_verb_is_found_in_any_spelling(verb: str, obj: str, shape: Shape) -> None:
    assert call_verb(shape(verb, obj)) == "write"


@given(st.sampled_from(sorted(READ_VERBS)), OBJECTS, st.sampled_from(SHAPES))
def test_a_read_verb_is_a_read(verb: str, obj: str, shape: Shape) -> None:
    assert call_verb(shape(verb, obj)) == "read"


@given(st.text(max_size=30))
def test_any_name_parses(name: str) -> None:
    assert call_verb(name) in ("write", "read", None)
    assert all(w == w.lower() and w for w in name_words(name))


@given(st.lists(OBJECTS, min_size=1, max_size=3))
def test_a_name_without_a_verb_has_none(words: list[str]) -> None:
    assert call_verb("_".join(words)) is None
    assert call_verb("予約取消") is None and call_verb("t3") is None


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["book_flight", "cancelOrder", "orders.create"]),
            st.sampled_from(["get_user", "searchFlights", "think"]),
            st.sampled_from(["stornieren", "t1", "t2"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_the_last_call_is_presumed_only_when_no_name_has_a_verb(tools: list[str]) -> None:
    turns = [Turn(i, "a", "{}", t) for i, t in enumerate(tools)]
    known = [i for i, t in enumerate(tools) if call_verb(t) == "write"]
    speaks = any(call_verb(t) for t in tools)
    # a recognised verb anywhere in the run: only the recognised writes, nothing presumed
    assert write_calls(turns) == (known if speaks else [len(tools) - 1])


def test_unknown_calls_beside_english_ones_stay_reads() -> None:
    turns = [Turn(0, "a", "{}", "order_lookup"), Turn(1, "a", "{}", "policy_eval")]
    assert call_verb("order_lookup") == "read" and call_verb("policy_eval") is None
    assert write_calls(turns) == []


def test_the_old_prefix_rule_is_kept() -> None:
    for tool in ("book_reservation", "update_reservation_flights", "transfer_to_human_agents"):
        assert sig.WRITE_CALL.match(tool) and write_calls([Turn(0, "a", "", tool)]) == [0]
    assert write_calls([Turn(0, "a", "", "get_user_details")]) == []


def _chat(user: str, agent: str, tool: str, calls: tuple[str, str] = ("t1", "t2")) -> RunTrace:
    """A tool-calling chat: the user asks, the agent calls twice, the tool answers each."""
    return _run(
        (user, "Bitte storniere meine Bestellung 42."),
        (agent, '{"id": 42}', calls[0]),
        (tool, '{"id": 42, "status": "open"}'),
        (agent, '{"id": 42}', calls[1]),
        (tool, '{"id": 42, "status": "cancelled"}'),
        (agent, "Erledigt."),
        (user, "Danke."),
    )


def test_opaque_speakers_of_a_tool_calling_chat_get_their_roles() -> None:
    run = _chat("S1", "S2", "S3")
    assert roles(run) == {"s1": "user", "s2": "agent", "s3": "tool"}
    assert run_signals(run).writes == [3]  # no call's name has a known verb: the last one
    assert run_signals(_chat("S1", "S2", "S3", ("lookup_order", "stornieren"))).writes == []


def test_the_fallback_never_overrides_a_recognised_name() -> None:
    # recognised names keep what their names say, even where the layout would say otherwise
    assert roles(_chat("user", "assistant", "tool")) == {
        "user": "user",
        "assistant": "agent",
        "tool": "tool",
    }
    run = _run(
        ("Coder", "```python\nprint(1)\n```"),
        ("Planner", "Looks fine, next."),
        ("Coder", "```python\nprint(2)\n```"),
        ("Planner", "Good."),
    )
    assert roles(run)["planner"] == "orchestrator"  # would answer actions, but is named
    named_user = _run(
        ("Lead", "Count the rows."),
        ("customer", "ok"),
        ("Coder", "{}", "t1"),
        ("Lead", "fine"),
    )
    assert roles(named_user)["lead"] == "agent"  # a user is named: no requester is guessed
    named_tool = _run(
        ("Lead", "Task: book the table."),
        ("Booker", "", "make_booking"),
        ("tool", "ok"),
        ("Booker", "Booked for two."),
        ("Lead", "Thanks."),
    )
    assert roles(named_tool) == {"lead": "agent", "booker": "agent", "tool": "tool"}


def test_a_group_chat_gets_no_requester_and_one_answer_is_no_tool() -> None:
    run = _run(
        ("A1", "Plan: compute the mean."),
        ("A2", "```python\nprint(sum(x) / len(x))\n```"),
        ("A3", "That code divides by the length, fine."),
        ("A1", "Agreed."),
    )
    assert set(roles(run).values()) == {"agent"}
