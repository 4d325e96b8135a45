"""Agent names are never features: renaming every agent consistently (in the speaker field,
in a speaker's channel suffix and wherever the text mentions it) must not move an attribution."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from contextos_lab.insights.attribution.default_weights import DEFAULT_WEIGHTS
from contextos_lab.insights.attribution.linear import LinearAttributor
from contextos_lab.insights.attribution.turns import RunTrace, run_trace
from contextos_lab.loaders.who_and_when import load_who_and_when
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs

#: Conversation roles, not agent names: the task giver and the message channel stay as written.
ROLES = {"human", "user", "assistant", "system", "tool"}
#: Neutral replacement names that carry no role word (no "terminal", "orchestrator", "expert").
NEUTRAL = [f"Member{k}" for k in range(40)]


def _agents(raw: dict[str, Any]) -> list[str]:
    """The agent names a Who&When-shaped run uses, with any channel suffix cut off:
    `Orchestrator (-> WebSurfer)` names the agents Orchestrator and WebSurfer."""
    names: set[str] = set()
    for h in raw["history"]:
        speaker = str(h.get("name") or h.get("role") or "")
        names.update(re.findall(r"[A-Za-z][\w]*", re.sub(r"\((?!->)[^)]*\)", "", speaker)))
    return sorted(n for n in names if n.lower() not in ROLES)


def _renamed(raw: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], dict[str, str]]:
    agents = _agents(raw)
    mapping = dict(zip(agents, rng.sample(NEUTRAL, len(agents)), strict=True))
    if not mapping:
        return raw, mapping
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, agents)) + r")\b")

    def sub(text: str) -> str:
        return pattern.sub(lambda m: mapping[m.group(1)], text)

    history = [
        {k: sub(v) if isinstance(v, str) else v for k, v in h.items()} for h in raw["history"]
    ]
    return {**raw, "history": history}, mapping


def _attributions(folder: Path) -> list[tuple[str, int] | None]:
    # in the order the runs were written (write_runs names them 0.json, 1.json, ...)
    result = load_who_and_when(sorted(folder.glob("*.json"), key=lambda p: int(p.stem)))
    assert not result.quarantined
    model = LinearAttributor(DEFAULT_WEIGHTS)
    runs: list[RunTrace] = [run_trace(t) for t in result.traces]
    out = []
    for run in runs:
        a = model.attribute(run)
        out.append(None if a is None else (a.agent, a.step))
    return out


def _check(raws: list[dict[str, Any]], tmp_path: Path) -> None:
    rng = random.Random(7)
    renamed, maps = zip(*(_renamed(r, rng) for r in raws), strict=True)
    before = _attributions(write_runs(tmp_path / "before", raws))
    after = _attributions(write_runs(tmp_path / "after", list(renamed)))
    assert any(m for m in maps)  # the rename did rename
    for b, a, mapping in zip(before, after, maps, strict=True):
        if b is None:
            assert a is None
            continue
        expected = re.sub(r"[A-Za-z]\w*", lambda m, mp=mapping: mp.get(m[0], m[0]), b[0])
        assert a == (expected, b[1])


def test_renaming_agents_changes_no_attribution_on_the_fixture_runs(tmp_path: Path) -> None:
    raws = [orchestrated_run(i, s) for i, s in enumerate(["WebSurfer", "Websurfer"])]
    raws += [group_chat_run(i) for i in range(2)]
    _check(raws, tmp_path)


@pytest.mark.external
def test_renaming_agents_changes_no_attribution_on_real_runs(
    tmp_path: Path, external_dir: Path
) -> None:
    src = external_dir / "who-and-when" / "Algorithm-Generated"
    raws = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(src.glob("*.json"))]
    assert len(raws) >= 100
    _check(raws, tmp_path)
