"""A file no format claims says why when it is JSON that does not parse: the parser's line and
column (a truncated export), not "format not recognised"."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.sources import load_sources
from contextos_lab.loaders.detect import files_of, walk_files, why_unknown


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


def test_walk_files_lists_a_folder_in_path_order_one_folder_at_a_time(
    tmp_path: Path, monkeypatch
) -> None:
    """`cluster` walks a corpus lazily (`walk_files`): a list of every file's `Path` was
    about 0.4 KB a file in the parent (issue 39). The files and their order are those the
    sorted `rglob` listing gave: by their path's parts, folders' links not entered, files'
    links kept, other suffixes left out; a folder that cannot be listed is skipped."""
    for name in ("b.json", "a.json", "a/z.jsonl", "a-b/c.json", "a/b/c.csv", "n.txt", "A.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)
    (tmp_path / "c.json").symlink_to(tmp_path / "b.json")
    expected = ["A.json", "a/b/c.csv", "a/z.jsonl", "a-b/c.json", "a.json", "b.json", "c.json"]
    walked = walk_files(tmp_path)
    assert next(walked) == tmp_path / "A.json"  # found before the other folders are read
    assert [tmp_path / "A.json", *walked] == [tmp_path / n for n in expected]
    assert files_of(tmp_path) == [tmp_path / n for n in expected]
    assert list(walk_files(tmp_path / "b.json")) == files_of(tmp_path / "b.json")
    listdir = os.listdir

    def refused(path: object) -> list[str]:
        if Path(str(path)) == tmp_path / "a":
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", refused)
    assert files_of(tmp_path) == [tmp_path / n for n in expected if not n.startswith("a/")]
