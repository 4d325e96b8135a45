"""Per-system step features: what only a user's own labelled runs can weigh.

The bundled STEP_FEATURES are generic so they carry over to systems the project never saw;
what they cannot say is which of *this* system's agents, which of its tools, or which place in
its runs tends to be decisive. These features name exactly that: the step's speaker
(`speaker:<agent key>`), the tool it calls (`tool:<name>`), its place among the run's
candidates counted from the end (`from_end:0` .. `from_end:3`) and the fifth of the run it
falls in (`fifth:0` .. `fifth:4`). They have no bundled weight (0: the bundled attributor is
unchanged); `calibrate` learns them from the labelled runs, shrunk toward 0, and a weights file
carries them beside the generic ones.
"""

from __future__ import annotations

from contextos_lab.insights.attribution.turns import RunTrace, agent_key

#: The families of per-system feature names (`family:value`).
SYSTEM_FAMILIES = ("speaker", "tool", "from_end", "fifth")
#: Candidates counted from the run's end that get their own feature (beyond: none).
FROM_END = 4
#: Position bins over the run's turns.
FIFTHS = 5


def is_system_feature(name: str) -> bool:
    """Whether `name` is a per-system feature name (`family:value`, family in SYSTEM_FAMILIES)."""
    family, sep, value = name.partition(":")
    return bool(sep and value) and family in SYSTEM_FAMILIES


def system_rows(run: RunTrace, candidates: list[int]) -> list[dict[str, float]]:
    """One row of fired per-system features (value 1) per candidate step, in `candidates`'
    order; the speaker is the agent key, so spelling variants are one agent."""
    n, last = len(run.turns), len(candidates) - 1
    rows = []
    for j, i in enumerate(candidates):
        turn = run.turns[i]
        row = {f"speaker:{agent_key(turn.speaker)}": 1.0}
        if turn.tool:
            row[f"tool:{turn.tool}"] = 1.0
        if last - j < FROM_END:
            row[f"from_end:{last - j}"] = 1.0
        row[f"fifth:{min(FIFTHS - 1, FIFTHS * i // max(1, n))}"] = 1.0
        rows.append(row)
    return rows


__all__ = ["FIFTHS", "FROM_END", "SYSTEM_FAMILIES", "is_system_feature", "system_rows"]
