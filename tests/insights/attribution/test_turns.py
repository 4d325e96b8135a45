"""An agent's identity (`agent_key`) across spelling variants, in any script."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.insights.attribution.turns import agent_key


def test_agents_named_in_another_script_are_told_apart() -> None:
    """Every non-ASCII letter was dropped, so `計画者` and `検索者` were one agent, `unknown`:
    on a system named in Japanese agent top-1 read 1.0 while no step was found."""
    names = ["計画者", "検索者", "批評者", "Prüfer", "Prufer", "Kritiker"]
    assert len({agent_key(n) for n in names}) == len(names)
    assert agent_key("計画 者") == agent_key("計画_者") == "計画者"


def test_spelling_variants_are_one_agent() -> None:
    assert {agent_key(n) for n in ("WebSurfer", "Web Surfer", "web_surfer", "Websurfer")} == {
        "websurfer"
    }
    assert agent_key("") == agent_key("__") == "unknown"


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_names_keep_their_old_key(name: str) -> None:
    """The shared sets' names are ASCII: their keys (and so every figure) are unchanged."""
    assert agent_key(name) == (re.sub(r"[^a-z0-9]+", "", name.lower()) or "unknown")
