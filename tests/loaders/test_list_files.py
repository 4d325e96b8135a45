"""A list file with one element nested too deeply to parse: that element is quarantined alone,
its neighbours load (trace loaders and JSON record files alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.loaders.raw_rows import array_items
from contextos_lab.loaders.records import load_records
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.who_and_when import load_who_and_when

FIXTURES = Path(__file__).parents[1] / "insights" / "fixtures"
DEEP = "[" * 100_000 + "]" * 100_000  # past the JSON parser's recursion limit


def _list_with_a_deep_one(items: list[object], at: int) -> str:
    texts = [json.dumps(item) for item in items]
    texts.insert(at, f'{{"deep": {DEEP}}}')
    return "[\n" + ",\n".join(texts) + "\n]"


def test_tau_bench_runs_beside_a_deep_one_load(tmp_path: Path) -> None:
    runs = json.loads((FIXTURES / "tau_bench_airline_small.json").read_text())[:4]
    path = tmp_path / "gpt-4o-airline.json"
    path.write_text(_list_with_a_deep_one(runs, 2))
    result = load_tau_bench(path)
    assert len(result.records) == 4
    assert [(q.line, "nested too deeply" in q.message) for q in result.quarantined] == [(3, True)]


def test_who_and_when_rows_beside_a_deep_one_load(tmp_path: Path) -> None:
    rows = json.loads((FIXTURES / "who_and_when_small.json").read_text())
    rows = rows if isinstance(rows, list) else [rows]
    path = tmp_path / "failures.json"
    path.write_text(_list_with_a_deep_one(rows, 0))
    result, alone = load_who_and_when(path), load_who_and_when(FIXTURES / "who_and_when_small.json")
    assert len(result.records) == len(alone.records) > 0
    shifted = [(1, True)] + [(q.line + 1, False) for q in alone.quarantined]  # (its variants)
    assert [(q.line, "nested too deeply" in q.message) for q in result.quarantined] == shifted


def test_a_json_record_file_keeps_the_rows_beside_a_deep_one(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (FIXTURES.parents[2] / "examples" / "coding_agent"
            / "data" / "decisions.jsonl").read_text().splitlines()[:4]]  # fmt: skip
    path = tmp_path / "decisions.json"
    path.write_text(_list_with_a_deep_one(rows, 4))
    loaded = load_records("decisions", path)
    assert len(loaded.records) == 4
    assert [(q.line, "nested too deeply" in q.message) for q in loaded.quarantined] == [(5, True)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
), max_size=6))  # fmt: skip
def test_array_items_splits_as_the_parser_does(items: list[object]) -> None:
    text = json.dumps(items, indent=1 if len(items) % 2 else None)
    assert [json.loads(t) for t in array_items(text) or []] == items


def test_nesting_too_deep_is_its_own_type() -> None:
    from contextos_lab.loaders.guard import NestedTooDeep, loads, loads_list

    with pytest.raises(NestedTooDeep):
        loads("[" * 100_000 + "]" * 100_000)
    deep, bad = loads_list("[" + "[" * 100_000 + "]" * 100_000 + ", tru]")
    assert "nested too deeply" in str(deep) and "nested too deeply" not in str(bad)
