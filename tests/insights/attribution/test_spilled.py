"""Attribution rows kept on disk (`attribution.spilled`): read back as the dict they replace
(later rows win in group order), their variable-size fields as markers until `fill`."""

from __future__ import annotations

from typing import Any

from contextos_lab.insights.attribution.spilled import SPILLED, Spilled, SpilledAttributions


def _row(agent: str, excerpt: str) -> dict[str, Any]:
    return {
        "agent": agent,
        "step": 3,
        "probability": 0.25,
        "excerpt": excerpt,
        "candidates": [{"step": 3, "agent": agent, "probability": 0.25}],
        "signals": ["error"],
    }


def test_read_back_as_the_dict_it_replaces() -> None:
    spilled = SpilledAttributions()
    first, second = spilled.group(), spilled.group()
    spilled.put("t1", _row("A", "put first"), second)
    spilled.put("t2", None, first)
    spilled.put("t3", _row("B", "ünïcode"), first)
    spilled.put("t1", _row("C", "first group"), first)
    spilled.put("t1", _row("D", "put last"), second)
    want: dict[str, Any] = {}  # dict.update per group, in group order
    want.update({"t2": None, "t3": _row("B", "ünïcode"), "t1": _row("C", "first group")})
    want.update({"t1": _row("A", "put first")})
    want.update({"t1": _row("D", "put last")})
    assert list(spilled) == list(want) and len(spilled) == 3
    assert {t: spilled.whole(t) for t in spilled} == want
    row = spilled["t3"]
    assert row is not None and row["agent"] == "B" and row["probability"] == 0.25
    assert all(isinstance(row[k], Spilled) for k in SPILLED if k in row)
    assert spilled["t2"] is None
    filled = spilled.fill([{**row, "record_id": "r3"}])
    assert filled == [{**_row("B", "ünïcode"), "record_id": "r3"}]
    spilled.close()
