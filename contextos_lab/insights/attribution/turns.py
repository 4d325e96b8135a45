"""A run as the attributor reads it: ordered turns (who spoke, what they said or called).

Attribution reads only the trace, so every loader's spans are reduced to one neutral shape:
`Turn(index, speaker, content, tool)`. Who&When spans carry the speaker in `gen_ai.agent.name`
and the step in `whoandwhen.step`; tau-bench spans carry the message role and index, and a tool
call's name. Annotations never enter this shape.

A span export makes every span a step, so a trace's workflow root becomes a turn too. A span
that is the parent of another actor (a span that is not a tool call) and carries no text and no
tool call of its own is marked `container`: it keeps its step number (users annotate by it) and
its speaker (context for the turns under it), but it did nothing itself, so the attributor never
blames it (docs/failure_attribution.md, "Span exports"). An agent span whose only children are
its tool calls made those calls: it is not a container.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextos_lab.loaders.conventions import ROLE, TOOL
from contextos_lab.loaders.otlp import AGENT_NAME, TOOL_NAME, Trace
from contextos_lab.loaders.trace_text import CONTENT

#: Span attributes that carry a step's position in its run, per loader.
STEP_KEYS = ("whoandwhen.step", "tau.message_index", "contextos.step", "step")
#: What an agent key drops: anything but a letter or digit of any script (`\w` less `_`).
_NOT_NAME = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Turn:
    index: int
    speaker: str
    content: str
    #: The tool the turn calls (tau-bench function calls), else None.
    tool: str | None = None
    #: A span that holds another actor and has no text and no tool call: never a candidate.
    container: bool = False


@dataclass(frozen=True)
class RunTrace:
    run_id: str
    turns: tuple[Turn, ...]
    source: str = ""

    @property
    def speakers(self) -> list[str]:
        return [t.speaker for t in self.turns]


def agent_key(name: str) -> str:
    """The identity of an agent name across spelling variants (`Websurfer`, `Web Surfer`,
    `web_surfer` and `WebSurfer` are one agent). Letters of any script count (`計画者` and
    `検索者` are two agents); ASCII names keep the key `[a-z0-9]` gave them."""
    return _NOT_NAME.sub("", name.lower()) or "unknown"


def _step(attributes: Mapping[str, Any]) -> int | None:
    for key in STEP_KEYS:
        if isinstance(attributes.get(key), int):
            return int(attributes[key])
    return None


def run_trace(trace: Trace) -> RunTrace:
    """The turns of a loaded trace, in step order (spans without a step are skipped)."""
    turns: list[tuple[int, int, Turn]] = []
    # Spans that hold an actor (a child that is not a tool call); an agent span whose children
    # are only its own tool calls made them, so it is not a container.
    holders = {
        s.parent_span_id for s in trace.spans if s.parent_span_id and s.attributes.get(ROLE) != TOOL
    }
    for order, span in enumerate(trace.spans):
        at = _step(span.attributes)
        if at is None:
            continue
        attrs = span.attributes
        tool = attrs.get(TOOL_NAME) if span.tool_name else None
        speaker = (
            attrs.get(AGENT_NAME)
            or attrs.get("gen_ai.message.role")
            or ("assistant" if tool else span.name)
        )
        text = str(attrs.get(CONTENT) or "")
        holds = span.span_id in holders and not tool and not text.strip()
        turns.append((at, order, Turn(at, str(speaker), text, tool, holds)))
    turns.sort(key=lambda t: (t[0], t[1]))
    return RunTrace(trace.trace_id, tuple(t for _, _, t in turns), trace.source)


__all__ = ["STEP_KEYS", "RunTrace", "Turn", "agent_key", "run_trace"]
