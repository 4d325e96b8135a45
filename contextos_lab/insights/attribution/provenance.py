"""Where a run's final answer came from, and which claims other speakers disputed soon after.

Two questions a failure researcher asks of a failed run before any other: *who first stated the
values the run ended on* (a wrong final answer is usually carried, unchanged, from the turn that
introduced it) and *whose claim did another speaker call wrong* (a verifier or a peer saying
"incorrect", "a discrepancy", "that's a mistake" in reply). Both read only turns, speakers and
roles, so they carry over to any multi-agent layout: values are figures, capitalised names and
quoted or bold phrases outside code blocks, and whatever the task statement (the first turn)
already says is not "introduced" by anyone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.turns import Turn, agent_key

#: Figures (numbers with their units cut off) a turn states; code blocks are left out.
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
#: A value a turn can state: a figure, a capitalised name (one or more words), a quoted or a
#: bold phrase. Lower-cased and stripped of quotes, bold marks and thousands separators.
_VALUE = re.compile(
    FIGURE.pattern + r"|\b[A-Z][\w'-]{2,}(?:\s+[A-Z][\w'-]+)*|"
    r"\"[^\"\n]{3,60}\"|\*\*[^*\n]{2,60}\*\*"
)


def figures(text: str) -> set[str]:
    """The figures a turn states outside its code blocks, thousands separators dropped."""
    return {f.replace(",", "") for f in FIGURE.findall(CODE_BLOCK.sub(" ", text)) if len(f) > 1}


#: A reply comes within a few steps of the claim it disputes (a tool's output may sit between).
CONTRADICTION_WINDOW = 3


def values(text: str) -> set[str]:
    """The values a turn states outside its code blocks (see `_VALUE`)."""
    out = set()
    for match in _VALUE.findall(CODE_BLOCK.sub(" ", text)):
        value = match.strip('"*').replace(",", "").strip().lower()
        if len(value) > 1:
            out.add(value)
    return out


def final_answer_share(
    turns: Sequence[Turn], acting: Sequence[bool], final: int | None
) -> list[float]:
    """Per turn, the share of the final turn's values (those not in the task statement) that
    this acting turn was the first to state; tool output states nothing of its own here."""
    stated = [values(t.content) for t in turns]
    if final is None or not turns:
        return [0.0] * len(turns)
    answer = stated[final] - stated[0]
    said = set(stated[0])
    out = []
    for i, here in enumerate(stated):
        new = here - said if acting[i] else set()
        out.append(len(new & answer) / max(1, len(answer)))
        said |= here
    return out


def contradicted_soon_after(turns: Sequence[Turn], acting: Sequence[bool]) -> list[bool]:
    """Per turn, whether another acting speaker, within CONTRADICTION_WINDOW steps after it,
    says something was wrong (`signals.CONTRADICT`)."""
    n = len(turns)
    disputes = [acting[j] and bool(sig.CONTRADICT.search(turns[j].content)) for j in range(n)]
    keys = [agent_key(t.speaker) for t in turns]
    return [
        any(
            disputes[j] and keys[j] != keys[i]
            for j in range(i + 1, min(n, i + 1 + CONTRADICTION_WINDOW))
        )
        for i in range(n)
    ]


__all__ = [
    "CODE_BLOCK",
    "CONTRADICTION_WINDOW",
    "FIGURE",
    "contradicted_soon_after",
    "figures",
    "final_answer_share",
    "values",
]
