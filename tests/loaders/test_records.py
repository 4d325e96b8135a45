"""Loading files into typed envelopes: every format, every bad input the issue names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextos_lab.loaders import (
    KINDS,
    MAX_STRING_CHARS,
    Loader,
    RecordLoader,
    UnreadableSource,
    load_records,
)
from contextos_lab.schemas import DecisionRecord, FeedbackEntry
from contextos_lab.schemas.base import canonical_json
from tests.loaders.fixtures import (
    decision_row,
    feedback_record_row,
    feedback_row,
    preference_row,
    scorecard_row,
    write_rows,
)

FORMATS = ("jsonl", "json", "csv", "parquet")
ROWS = {
    "decisions": decision_row,
    "feedback": feedback_row,
    "feedback-records": feedback_record_row,
    "scorecards": scorecard_row,
    "preferences": preference_row,
}


def _write(tmp_path: Path, kind: str, fmt: str, rows: list[dict[str, Any]]) -> Path:
    return write_rows(tmp_path / f"in.{fmt}", rows, KINDS[kind])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_happy_path_every_kind_and_format(tmp_path: Path, kind: str, fmt: str) -> None:
    rows = [ROWS[kind](i) for i in range(3)]
    result = load_records(kind, _write(tmp_path, kind, fmt, rows))
    assert result.quarantined == []
    assert [r.canonical() for r in result.records] == [canonical_json(r) for r in rows]
    assert result.summary() == "accepted 3, quarantined 0"
    assert result.records.to_frame().shape[0] == 3
    assert result.locator == ("line" if fmt in ("jsonl", "csv") else "row")


def test_record_loader_is_a_loader() -> None:
    assert isinstance(RecordLoader(DecisionRecord), Loader)


def test_csv_nested_dotted_headers_and_json_cells(tmp_path: Path) -> None:
    path = tmp_path / "fb.csv"
    write_rows(path, [feedback_row(0)], FeedbackEntry)
    header = path.read_text(encoding="utf-8").splitlines()[0]
    assert "expected_outcome.terminal_state" in header
    assert "expected_outcome.field_overrides" in header
    entry = load_records("feedback", path).records[0]
    assert entry.expected_outcome.terminal_state == "DENIED"
    assert entry.expected_outcome.field_overrides == {"refund": False}
    assert entry.evidence_refs_seen == ("order:0",)


def test_csv_string_that_looks_like_json_stays_a_string(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "d.csv", [decision_row(0, intent='["not", "a list"]')], DecisionRecord
    )
    (record,) = load_records("decisions", path).records
    assert record.intent == '["not", "a list"]'


def test_csv_line_numbers_count_the_header_and_multiline_cells(tmp_path: Path) -> None:
    rows = [decision_row(0, decision="approve\nwith a note"), decision_row(1, status="NOPE")]
    result = load_records("decisions", _write(tmp_path, "decisions", "csv", rows))
    assert result.origins["dr_2026_05_01_r0"].line == 2
    (bad,) = result.quarantined
    assert (bad.line, bad.field) == (4, "status")


def test_truncated_jsonl_line_is_quarantined_and_the_rest_loads(tmp_path: Path) -> None:
    lines = [json.dumps(decision_row(i)) for i in range(3)]
    lines[1] = lines[1][:40]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_records("decisions", path)
    assert len(result.records) == 2
    (bad,) = result.quarantined
    assert (bad.line, bad.field, bad.stage) == (2, None, "parse")
    assert "truncated" in bad.message and "column" in bad.message
    assert bad.raw == lines[1]


def test_wrong_types_list_every_field_error(tmp_path: Path) -> None:
    row = decision_row(0, inputs="not a dict", evidence_refs=5, decided_at="yesterday")
    result = load_records("decisions", _write(tmp_path, "decisions", "jsonl", [row]))
    (bad,) = result.quarantined
    assert bad.field == "inputs"
    for name in ("inputs:", "evidence_refs:", "decided_at:"):
        assert name in bad.message
    assert "'not a dict'" in bad.message


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_enum_value_names_the_allowed_values(tmp_path: Path, fmt: str) -> None:
    rows = [decision_row(0, status="MAYBE"), decision_row(1)]
    result = load_records("decisions", _write(tmp_path, "decisions", fmt, rows))
    assert len(result.records) == 1
    (bad,) = result.quarantined
    assert bad.field == "status" and "'COMPLETED'" in bad.message and "'MAYBE'" in bad.message


def test_unknown_reason_class_names_the_registry(tmp_path: Path) -> None:
    row = feedback_row(0, override_reason_class="vibes", expected_outcome={"terminal_state": 3})
    result = load_records("feedback", _write(tmp_path, "feedback", "jsonl", [row]))
    (bad,) = result.quarantined
    assert "reason_classes.json" in bad.message
    assert "expected_outcome.terminal_state:" in bad.message


def test_duplicate_ids_first_wins(tmp_path: Path) -> None:
    rows = [decision_row(0), decision_row(1), decision_row(0), decision_row(0, decision="deny")]
    result = load_records("decisions", _write(tmp_path, "decisions", "jsonl", rows))
    assert [r.record_id for r in result.records] == ["dr_2026_05_01_r0", "dr_2026_05_01_r1"]
    assert result.records[0].decision == "approve"
    same, other = result.quarantined
    assert (same.line, same.field, same.stage) == (3, "record_id", "duplicate")
    assert "duplicate id dr_2026_05_01_r0 (first at line 1; identical content)" in same.message
    assert "different content" in other.message and other.line == 4


def test_non_utf8_jsonl_line_names_the_byte_offset(tmp_path: Path) -> None:
    good = json.dumps(decision_row(0)).encode()
    bad = json.dumps(decision_row(1)).encode().replace(b"approve", b"appr\xffve")
    path = tmp_path / "d.jsonl"
    path.write_bytes(good + b"\n" + bad + b"\n")
    result = load_records("decisions", path)
    assert len(result.records) == 1
    (q,) = result.quarantined
    offset = len(good) + 1 + bad.index(b"\xff")
    assert q.line == 2 and f"byte 0xff at byte offset {offset}" in q.message


def test_non_utf8_csv_cell_names_the_column(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "d.csv", [decision_row(0), decision_row(1)], DecisionRecord)
    data = path.read_bytes().replace(b"trace_1", b"trace_\xfe")
    path.write_bytes(data)
    result = load_records("decisions", path)
    assert len(result.records) == 1
    (q,) = result.quarantined
    assert (q.line, q.field) == (3, "trace_id") and "0xfe" in q.message


def test_non_utf8_json_document_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'[{"a": "\xff"}]')
    with pytest.raises(UnreadableSource, match="byte offset 8"):
        load_records("decisions", path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_megabyte_field_is_quarantined_with_its_size(tmp_path: Path, fmt: str) -> None:
    big = "x" * (10 * 1024 * 1024)
    rows = [decision_row(0, inputs={"note": big}), decision_row(1)]
    result = load_records("decisions", _write(tmp_path, "decisions", fmt, rows))
    assert len(result.records) == 1
    (q,) = result.quarantined
    # tabular formats carry free-form dicts as JSON text, decoded before the check: same field
    assert q.field == "inputs.note"
    assert q.message == f"field inputs.note is {len(big)} characters; the limit is 1000000"
    assert str(MAX_STRING_CHARS) in q.message
    assert len(q.raw) < 2200


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_file_loads_nothing_with_a_note(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"empty.{fmt}"
    path.write_bytes(b"")
    result = load_records("decisions", path)
    assert (len(result.records), len(result.quarantined)) == (0, 0)
    assert result.notes == ["file is empty"]


def test_header_only_csv_and_empty_array(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("record_id,trace_id\n", encoding="utf-8")
    (tmp_path / "a.json").write_text("[]", encoding="utf-8")
    for name in ("h.csv", "a.json"):
        assert load_records("decisions", tmp_path / name).notes == ["file has no data rows"]


def test_non_objects_are_quarantined(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('[1, 2]\n\n"text"\n', encoding="utf-8")
    lines = load_records("decisions", tmp_path / "d.jsonl").quarantined
    assert [(q.line, q.message) for q in lines] == [
        (1, "expected a JSON object, got an array"),
        (3, "expected a JSON object, got a string"),
    ]
    (tmp_path / "d.json").write_text(json.dumps([decision_row(0), 7]), encoding="utf-8")
    result = load_records("decisions", tmp_path / "d.json")
    assert len(result.records) == 1 and result.quarantined[0].line == 2


def test_malformed_csv_rows(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "d.csv", [decision_row(0)], DecisionRecord)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + text.splitlines()[1] + ",extra\n" + 'dr_x,"unclosed\n', encoding="utf-8")
    result = load_records("decisions", path)
    assert len(result.records) == 1
    extra, unclosed = result.quarantined
    assert extra.line == 3 and "cells; the header has" in extra.message
    assert unclosed.line == 4 and "malformed CSV" in unclosed.message


def test_csv_row_with_fewer_cells_than_the_header_is_quarantined(tmp_path: Path) -> None:
    """A cut-off row must not load with the model's defaults for its missing columns (here the
    optional `intent` and `policy_version`, so the short row would otherwise be accepted)."""
    header = "record_id,trace_id,decision_key,status,decision,decided_at,intent,policy_version"
    full = "dr_2026_05_01_r1,t1,k,COMPLETED,approve,2026-05-01T09:00:00+00:00,support.refund,v4"
    short = "dr_2026_05_01_r2,t2,k,COMPLETED,approve,2026-05-01T09:00:00+00:00"
    path = tmp_path / "d.csv"
    path.write_text(f"{header}\n{full}\n{short}\n", encoding="utf-8")
    result = load_records("decisions", path)
    assert [(r.record_id, r.intent) for r in result.records] == [
        ("dr_2026_05_01_r1", "support.refund")
    ]
    (q,) = result.quarantined
    assert q.line == 3 and q.field is None and q.raw.startswith("dr_2026_05_01_r2")
    assert q.message == "row has 6 cells; the header has 8 (truncated?)"
    # a row with every cell present but some empty is still fine (empty = absent)
    path.write_text(f"{header}\n{short},,\n", encoding="utf-8")
    assert len(load_records("decisions", path).records) == 1


def test_repeated_json_keys_are_quarantined_naming_the_field(tmp_path: Path) -> None:
    """`json.loads` keeps the last of two values for one key; the row is refused instead."""
    row = decision_row(0)
    body = json.dumps({k: v for k, v in row.items() if k != "decision"})[1:-1]
    twice = '{"decision": "deny", ' + body + ', "decision": "approve"}'
    nested = json.dumps(decision_row(1)).replace('"amount": 121', '"amount": 1, "amount": 121')
    assert '"amount": 1, "amount": 121' in nested
    path = tmp_path / "d.jsonl"
    path.write_text(f"{twice}\n{nested}\n{json.dumps(decision_row(2))}\n", encoding="utf-8")
    result = load_records("decisions", path)
    assert [r.record_id for r in result.records] == [decision_row(2)["record_id"]]
    first, second = result.quarantined
    assert (first.line, first.field, first.stage) == (1, "decision", "parse")
    assert "'decision' occurs more than once" in first.message
    assert (second.line, second.field) == (2, "inputs.amount")

    # the same rows in a JSON array: one row each, the clean one still loads
    array = tmp_path / "d.json"
    array.write_text(f"[{twice}, {nested}, {json.dumps(decision_row(2))}]", encoding="utf-8")
    result = load_records("decisions", array)
    assert len(result.records) == 1
    assert [(q.line, q.field) for q in result.quarantined] == [
        (1, "decision"),
        (2, "inputs.amount"),
    ]
    # a single object document too
    array.write_text(twice, encoding="utf-8")
    (q,) = load_records("decisions", array).quarantined
    assert q.field == "decision"


def test_nan_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(scorecard_row(0, policy=float("nan"))) + "\n", encoding="utf-8")
    (q,) = load_records("scorecards", path).quarantined
    assert "NaN is not a JSON number" in q.message
    assert q.field == "policy"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("missing.jsonl", None, "no such file"),
        ("d.json", b'[{"record_id": ', "invalid JSON at line 1 column"),
        ("d.json", b"42", "expected an array of objects or one object"),
        ("d.parquet", b"not parquet at all", "not a readable Parquet file"),
        ("d.txt", b"{}", "pass --format"),
        ("d.csv", b'"a,b\n', "header row is not valid CSV"),
        ("d.csv", b"a,a\n1,2\n", "appears twice"),
    ],
)
def test_unreadable_sources(tmp_path: Path, name: str, content: bytes | None, reason: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UnreadableSource, match=reason.replace("(", r"\(")):
        load_records("decisions", path)


def test_directory_is_unreadable_and_format_override_works(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(UnreadableSource, match="is a directory"):
        load_records("decisions", tmp_path / "dir.jsonl")
    path = tmp_path / "d.txt"
    path.write_text(json.dumps(decision_row(0)) + "\n", encoding="utf-8")
    assert len(load_records("decisions", path, "jsonl").records) == 1


def test_parquet_native_nested_types(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = feedback_row(0)
    row["expected_outcome"] = {"terminal_state": "DENIED", "field_overrides": {"refund": False}}
    path = tmp_path / "fb.parquet"
    pq.write_table(pa.Table.from_pylist([row]), path)
    (entry,) = load_records("feedback", path).records
    assert entry.expected_outcome.field_overrides == {"refund": False}
    assert entry.evidence_refs_seen == ("order:0",)


def test_bom_and_crlf_are_tolerated(tmp_path: Path) -> None:
    body = "\r\n".join(json.dumps(decision_row(i)) for i in range(2)) + "\r\n"
    (tmp_path / "d.jsonl").write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert len(load_records("decisions", tmp_path / "d.jsonl").records) == 2
    path = write_rows(tmp_path / "d.csv", [decision_row(0)], DecisionRecord)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(load_records("decisions", path).records) == 1


def test_unreadable_permissions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_rows(tmp_path / "d.jsonl", [decision_row(0)], DecisionRecord)

    def denied(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", denied)  # chmod 000 does not stop root, who runs CI
    with pytest.raises(UnreadableSource, match="Permission denied"):
        load_records("decisions", path)
