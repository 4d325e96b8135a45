"""Property tests: the parsers never lose a line, writers round-trip, ingest only ever appends."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from contextos_lab.loaders import RecordLoader, UnreadableSource, ingest_file, load_records
from contextos_lab.loaders.raw_rows import bom_encoding
from contextos_lab.schemas import DecisionRecord, TerminalStatus
from contextos_lab.store import ExperienceStore
from tests.loaders.fixtures import decision_row, write_rows

PROPS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
text = st.text(min_size=1, max_size=12)
offsets = st.integers(-12 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
decision_rows = st.fixed_dictionaries(
    {
        "record_id": st.from_regex(r"dr_[a-z0-9]{1,8}", fullmatch=True),
        "trace_id": text,
        "decision_key": text,
        "intent": st.none() | text,
        "status": st.sampled_from([s.value for s in TerminalStatus]),
        "decision": text,
        "inputs": st.dictionaries(st.text(max_size=6), json_leaf, max_size=4),
        "evidence_refs": st.lists(st.text(max_size=6), max_size=3),
        "tool_calls": st.lists(text, max_size=2),
        "outputs_hash": st.none() | st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
        "pack_version": st.none() | text,
        "decided_at": st.datetimes(timezones=st.just(UTC) | offsets),
    }
).map(lambda d: DecisionRecord.model_validate(d).model_dump(mode="json"))


def _is_blank(line: bytes, number: int) -> bool:
    body = line.rstrip(b"\r\n")
    if number == 1:
        body = body.removeprefix(b"\xef\xbb\xbf")
    return not body.strip()


@PROPS
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            decision_rows.map(lambda r: json.dumps(r, ensure_ascii=False).encode()),
            st.just(b""),
            st.just(b'{"record_id": "dr_x", "status": '),
        ),
        max_size=12,
    )
)
def test_jsonl_reader_accounts_for_every_line(lines: list[bytes]) -> None:
    lines = [line.replace(b"\n", b"") for line in lines]
    # a UTF-16/32 byte-order mark makes the file another encoding's lines, whose accounting
    # tests/loaders/test_encodings.py checks; this model is the bytes' own UTF-8 lines
    assume(bom_encoding(b"\n".join(lines))[0] in ("utf-8", "utf-8-sig"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.jsonl"
        path.write_bytes(b"\n".join(lines))
        result = RecordLoader(DecisionRecord).load(path)
    expected = [n for n, line in enumerate(lines, start=1) if not _is_blank(line, n)]
    seen = [q.line for q in result.quarantined] + [o.line for o in result.origins.values()]
    assert sorted(seen) == expected
    assert len(result.records) == len(result.origins)


@PROPS
@given(st.binary(max_size=300), st.sampled_from(["jsonl", "json", "csv", "parquet"]))
@example(b"\x00\x00\xfe\xff", "csv")  # a UTF-32 byte-order mark and nothing else (CI found)
def test_arbitrary_bytes_never_raise_anything_else(data: bytes, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"d.{fmt}"
        path.write_bytes(data)
        try:
            result = load_records("decisions", path)
        except UnreadableSource as exc:
            assert str(path) in str(exc)
            return
    assert all(q.line >= 1 and q.message for q in result.quarantined)


@PROPS
@given(
    st.lists(decision_rows, min_size=1, max_size=4), st.sampled_from(["jsonl", "csv", "parquet"])
)
def test_generated_records_round_trip_through_every_writer(
    rows: list[dict[str, Any]], fmt: str
) -> None:
    unique = list({r["record_id"]: r for r in rows}.values())
    with tempfile.TemporaryDirectory() as tmp:
        path = write_rows(Path(tmp) / f"d.{fmt}", unique, DecisionRecord)
        result = load_records("decisions", path)
    assert result.quarantined == []
    expected = [DecisionRecord.model_validate(r).canonical() for r in unique]
    assert [r.canonical() for r in result.records] == expected


BAD_LINES: dict[str, bytes] = {
    "truncated": b'{"record_id": "dr_2026_05_01_r1", "trace_',
    "wrong_type": json.dumps(decision_row(1, inputs=[1, 2])).encode(),
    "unknown_enum": json.dumps(decision_row(1, status="PENDING")).encode(),
    "non_utf8": b'{"record_id": "dr_\xc3\x28"}',
    "not_object": b"[]",
}


class IngestMachine(RuleBasedStateMachine):
    """Any sequence of good, bad and repeated ingests: rows only ever append, a stored row
    never changes, the chain verifies, and every id stored is the first content seen for it."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp())
        self.store = ExperienceStore(f"sqlite:///{self.tmp}/exp.db")
        self.stored: dict[str, str] = {}  # id -> canonical body of the first version stored
        self.snapshot: list[tuple[int, str]] = []
        self.files = 0

    def _file(self, fmt: str, rows: list[dict[str, Any]]) -> Path:
        self.files += 1
        return write_rows(self.tmp / f"f{self.files}.{fmt}", rows, DecisionRecord)

    @rule(
        ids=st.lists(st.integers(0, 5), min_size=1, max_size=4),
        variant=st.sampled_from(["approve", "deny"]),
        fmt=st.sampled_from(["jsonl", "json", "csv", "parquet"]),
    )
    def ingest_rows(self, ids: list[int], variant: str, fmt: str) -> None:
        rows = [decision_row(i, decision=variant) for i in ids]
        report = ingest_file("decisions", self._file(fmt, rows), self.store)
        first_in_file = {r["record_id"]: r for r in reversed(rows)}
        new = [rid for rid in first_in_file if rid not in self.stored]
        assert report.new == len(new)
        conflicts = sum(
            1
            for rid, row in first_in_file.items()
            if rid in self.stored
            and self.stored[rid] != DecisionRecord.model_validate(row).canonical()
        )
        assert len(report.quarantined) == len(rows) - len(first_in_file) + conflicts
        assert report.accepted == len(first_in_file) - conflicts
        for rid in new:
            self.stored[rid] = DecisionRecord.model_validate(first_in_file[rid]).canonical()

    @rule(bad=st.lists(st.sampled_from(sorted(BAD_LINES)), min_size=1, max_size=3))
    def ingest_bad_lines(self, bad: list[str]) -> None:
        self.files += 1
        path = self.tmp / f"f{self.files}.jsonl"
        path.write_bytes(b"\n".join(BAD_LINES[name] for name in bad) + b"\n")
        report = ingest_file("decisions", path, self.store)
        assert (report.accepted, len(report.quarantined)) == (0, len(bad))
        assert [q.line for q in report.quarantined] == list(range(1, len(bad) + 1))

    @rule()
    def ingest_empty(self) -> None:
        report = ingest_file("decisions", self._file("jsonl", []), self.store)
        assert (report.accepted, report.quarantined, report.notes) == (0, [], ["file is empty"])

    @invariant()
    def only_appends(self) -> None:
        rows = list(self.store.rows())
        now = [(r.seq, r.row_sha256) for r in rows]
        assert now[: len(self.snapshot)] == self.snapshot
        assert {r.artifact_id: r.body for r in rows} == self.stored
        assert self.store.verify().ok
        self.snapshot = now

    def teardown(self) -> None:
        self.store.engine.dispose()
        shutil.rmtree(self.tmp, ignore_errors=True)


IngestMachine.TestCase.settings = settings(max_examples=15, stateful_step_count=6, deadline=None)
test_ingest_state_machine = IngestMachine.TestCase


def test_store_still_verifies_after_the_machine_style_run(tmp_path: Path) -> None:
    store = ExperienceStore(f"sqlite:///{tmp_path}/exp.db")
    for variant in ("approve", "deny", "approve"):
        rows = [decision_row(i, decision=variant) for i in range(3)]
        ingest_file(
            "decisions", write_rows(tmp_path / f"{variant}.csv", rows, DecisionRecord), store
        )
    assert store.count() == 3 and store.verify().ok
