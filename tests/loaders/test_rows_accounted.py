"""Every row accounted for: whole-file refusals count their rows, BOMs never hide a format,
and a CSV row after a bad quote is still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.loaders.csv_rows import _csv_rows
from contextos_lab.loaders.detect import detect
from contextos_lab.loaders.raw_rows import decode_text, rows_held
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.who_and_when import load_who_and_when

WW = {
    "question_ID": "q1",
    "question": "what?",
    "mistake_agent": "Planner",
    "mistake_step": "2",
    "mistake_reason": "wrong plan",
    "history": [{"role": "user", "name": "Planner", "content": "x"}],
    "ground_truth": "42",
    "level": 1,
}


def _run(i: int, deep: bool = False) -> str:
    traj = '{"k":[' * 5000 + "1" + "]}" * 5000 if deep else '{"role": "user", "content": "hi"}'
    return f'{{"task_id": {i}, "reward": 1.0, "info": {{}}, "traj": [{traj}], "trial": 0}}'


def test_an_unreadable_trace_file_counts_every_run_it_held(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    text = "[" + ", ".join(_run(i) for i in range(15)) + "]"
    path.write_text(text[:-40])  # cut off: no run can be read with certainty
    result = load_tau_bench(path)
    assert len(result.records) == 0 and len(result.quarantined) == 1
    assert result.quarantined[0].rows == 15
    assert result.summary() == "accepted 0, quarantined 15"


def test_a_run_too_deep_to_read_is_quarantined_alone(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text("[" + ", ".join(_run(i, deep=(i == 7)) for i in range(15)) + "]")
    result = load_tau_bench(path)
    assert len(result.records) == 14 and [q.line for q in result.quarantined] == [8]
    assert result.summary() == "accepted 14, quarantined 1"


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: b"\xef\xbb\xbf" + t.encode(),
        lambda t: t.encode("utf-16"),
        lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
        lambda t: b"\n\xef\xbb\xbf" + t.encode(),
        lambda t: (b"\xef\xbb\xbf" + t.encode() + b"\n") * 2,
    ],
    ids=["utf8-bom", "utf16-bom", "utf16be-bom", "bom-after-blank", "bom-every-line"],
)
def test_who_and_when_loads_whatever_bom_it_carries(tmp_path: Path, encode) -> None:
    path = tmp_path / "ww.jsonl"
    path.write_bytes(encode(json.dumps(WW)))
    assert detect(path) == "who-and-when"
    result = load_who_and_when(path)
    assert result.quarantined == [] and len(result.records) >= 1


@pytest.mark.parametrize(
    "body",
    [
        'a,b,c\n1,"x,3\n4,5\n7,8,9\n',  # unclosed quote, then a missing cell
        'a,b,c\n1,"x"y,3\n4,5\n7,8,9\n',  # bad quote, then a missing cell
        'a,b,c\n"1,2,3\n4,5\n7,8,9\n',
    ],
)
def test_a_bad_quote_never_swallows_the_rows_after_it(body: str) -> None:
    rows = list(_csv_rows(Path("x.csv"), body.encode()))
    assert [r.number for r in rows] == [2, 3, 4]
    assert rows[0].error and rows[1].error and "cells" in rows[1].error
    assert rows[2].data == {"a": "7", "b": "8", "c": "9"}


def test_a_quoted_newline_is_still_one_row() -> None:
    rows = list(_csv_rows(Path("x.csv"), b'a,b\n"multi\nline",2\n3,4\n'))
    assert [(r.number, r.data) for r in rows] == [
        (2, {"a": "multi\nline", "b": "2"}),
        (4, {"a": "3", "b": "4"}),
    ]


ELEMENTS = st.recursive(
    st.one_of(st.integers(), st.text(max_size=8), st.none()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(items=st.lists(ELEMENTS, min_size=1, max_size=20), cut=st.booleans(), bom=st.booleans())
def test_rows_held_counts_top_level_elements(
    tmp_path_factory: pytest.TempPathFactory, items: list, cut: bool, bom: bool
) -> None:
    text = json.dumps(items)
    if cut:  # a broken tail (the last element cut short) still counts as a row
        text = text[: text.rindex("]")]
    path = tmp_path_factory.mktemp("rows") / "f.json"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    assert rows_held(path) == len(items)


def test_empty_files_hold_no_rows(tmp_path: Path) -> None:
    for name, data in (("a", b""), ("b", b"\xef\xbb\xbf"), ("c", b"  \r\n")):
        (tmp_path / name).write_bytes(data)
        assert rows_held(tmp_path / name) == 0
    assert decode_text(b"\xef\xbb\xbfx\n\xef\xbb\xbfy") == "x\ny"


def test_record_files_read_by_their_bom(tmp_path: Path) -> None:
    from contextos_lab.loaders.readers import open_rows

    row = {"a": "1", "b": "x"}
    (tmp_path / "r.json").write_bytes(json.dumps([row, row]).encode("utf-16"))
    (tmp_path / "r.jsonl").write_bytes((b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n") * 3)
    (tmp_path / "r.csv").write_bytes("a,b\n1,x\n".encode("utf-16"))
    for name, n in (("r.json", 2), ("r.jsonl", 3), ("r.csv", 1)):
        rows = list(open_rows(tmp_path / name).rows)
        assert [r.data for r in rows] == [row] * n, name
