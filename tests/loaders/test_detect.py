"""A file no format claims says why when it is JSON that does not parse: the parser's line and
column (a truncated export), not "format not recognised"."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.sources import load_sources
from contextos_lab.loaders.detect import why_unknown


def test_a_truncated_json_trace_is_quarantined_with_its_line(tmp_path) -> None:
    whole = json.dumps({"history": [{"role": "user", "content": "hi"}] * 3}, indent=1)
    (tmp_path / "run.json").write_text(whole[: len(whole) // 2])
    (q,) = load_sources([str(tmp_path)]).quarantined
    assert q.file.endswith("run.json") and q.line > 1
    assert "not valid JSON" in q.message and f"line {q.line}" in q.message


def test_json_lines_and_non_json_are_not_called_broken_json(tmp_path) -> None:
    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    text = tmp_path / "notes.txt"
    text.write_text("just words\n")
    assert why_unknown(lines) is None and why_unknown(text) is None


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.integers() | st.text(max_size=5), lambda c: st.lists(c, max_size=3)))
def test_any_cut_of_a_json_document_is_named_or_parses(tmp_path_factory, value) -> None:
    text = json.dumps({"v": value})
    path = tmp_path_factory.mktemp("cut") / "x.json"
    for cut in range(1, len(text)):
        path.write_text(text[:cut])
        got = why_unknown(path)
        assert got is not None and got[0] >= 1 and "not valid JSON" in got[1]
    path.write_text(text)
    assert why_unknown(path) is None
