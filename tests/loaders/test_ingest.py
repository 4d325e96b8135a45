"""`contextos-lab ingest`: what is stored, what is quarantined, what never changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.loaders import ingest_file, quarantine_path
from contextos_lab.schemas import DecisionRecord, FeedbackEntry
from contextos_lab.store import ExperienceStore
from tests.loaders.fixtures import OPERATOR, decision_row, feedback_row, write_rows


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/exp.db"


@pytest.fixture
def store(url: str) -> ExperienceStore:
    return ExperienceStore(url, authorised_overriders=[OPERATOR])


def _snapshot(store: ExperienceStore) -> list[tuple[int, str]]:
    return [(r.seq, r.row_sha256) for r in store.rows()]


def _ingest(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    # a fresh store's first write names its project (issue 40: never bound by default)
    code = main(["ingest", *map(str, argv), "--project", str(BUNDLED_PROJECT)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_stores_and_prints_the_counts(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_rows(tmp_path / "d.jsonl", [decision_row(i) for i in range(3)], DecisionRecord)
    code, out, _ = _ingest(capsys, "decisions", path, "--store", url)
    assert code == 0
    assert out.splitlines()[0] == "accepted 3, quarantined 0 (3 new, 0 already stored)"
    assert not quarantine_path(path).exists()
    assert ExperienceStore(url).count("decision_record") == 3


def test_reingest_stores_nothing_twice(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_rows(tmp_path / "d.csv", [decision_row(i) for i in range(3)], DecisionRecord)
    assert _ingest(capsys, "decisions", path, "--store", url)[0] == 0
    before = _snapshot(ExperienceStore(url))
    code, out, _ = _ingest(capsys, "decisions", path, "--store", url)
    assert code == 0
    assert "accepted 3, quarantined 0 (0 new, 3 already stored)" in out
    assert _snapshot(ExperienceStore(url)) == before


def test_bad_file_after_a_good_one_changes_nothing_stored(
    tmp_path: Path, store: ExperienceStore
) -> None:
    good = write_rows(tmp_path / "good.jsonl", [decision_row(i) for i in range(3)], DecisionRecord)
    assert ingest_file("decisions", good, store).new == 3
    before = _snapshot(store)
    bodies = [r.body for r in store.rows()]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        b"\n".join(
            [
                json.dumps(decision_row(0, decision="deny")).encode(),  # same id, new content
                json.dumps(decision_row(1))[:30].encode(),  # truncated
                json.dumps(decision_row(2, status=7)).encode(),  # wrong type
                json.dumps(decision_row(1, status="LATER")).encode(),  # unknown enum
                b'{"record_id": "dr_\xff"}',  # not UTF-8
                json.dumps(decision_row(0, decision="x" * 10_500_000)).encode(),  # 10 MB field
            ]
        )
    )
    report = ingest_file("decisions", bad, store)
    assert (report.accepted, len(report.quarantined)) == (0, 6)
    assert [q.line for q in report.quarantined] == [1, 2, 3, 4, 5, 6]
    conflict = report.quarantined[0]
    assert (conflict.stage, conflict.field) == ("store", "record_id")
    assert "already stored with different content" in conflict.message
    assert _snapshot(store) == before
    assert [r.body for r in store.rows()] == bodies
    assert store.verify().ok


def test_quarantine_file_content_and_stale_file_removed(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.csv"
    write_rows(path, [decision_row(0), decision_row(1, status="NOPE")], DecisionRecord)
    code, out, _ = _ingest(capsys, "decisions", path, "--store", url)
    assert code == 0 and "accepted 1, quarantined 1 (1 new, 0 already stored)" in out
    qfile = quarantine_path(path)
    assert qfile.name == "d.csv.quarantine.jsonl" and str(qfile) in out
    (row,) = [json.loads(line) for line in qfile.read_text(encoding="utf-8").splitlines()]
    assert row["file"] == str(path)
    assert (row["locator"], row["line"], row["field"]) == ("line", 3, "status")
    assert "'COMPLETED'" in row["message"] and "NOPE" in row["raw"]
    assert "line 3: status: Input should be" in out
    write_rows(path, [decision_row(0), decision_row(1)], DecisionRecord)
    code, out, _ = _ingest(capsys, "decisions", path, "--store", url)
    assert "accepted 2, quarantined 0 (1 new, 1 already stored)" in out
    assert not qfile.exists()


def test_all_rows_quarantined_still_exits_zero(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"record_id": "bad{i}"}}\n' for i in range(12)), encoding="utf-8")
    code, out, _ = _ingest(capsys, "decisions", path, "--store", url)
    assert code == 0 and out.startswith("accepted 0, quarantined 12 (0 new, 0 already stored)")
    assert "... and 2 more" in out


def test_empty_file_exits_two_and_opens_no_store(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Empty input never exits 0 (issue 18's CLI convention): one line, exit 2, no store."""
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    code, out, err = _ingest(capsys, "scorecards", path, "--store", url)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: {path}: no rows: the file is empty"]
    assert not (tmp_path / "exp.db").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [("missing.jsonl", None), ("d.parquet", b"PAR? nope"), ("d.json", b"[{")],
)
def test_unreadable_file_exits_two_and_opens_no_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes | None
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    db = tmp_path / "never.db"
    code, out, err = _ingest(capsys, "decisions", path, "--store", f"sqlite:///{db}")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}: ")
    assert not db.exists()


def test_unreachable_store_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_rows(tmp_path / "d.jsonl", [decision_row(0)], DecisionRecord)
    code, _, err = _ingest(capsys, "decisions", path, "--store", "nosuchdialect://x")
    assert code == 2 and err.startswith("error: ")


def test_store_refusals_become_quarantined_rows(tmp_path: Path, store: ExperienceStore) -> None:
    ingest_file(
        "decisions",
        write_rows(tmp_path / "d.jsonl", [decision_row(0)], DecisionRecord),
        store,
    )
    rows = [
        feedback_row(0),
        feedback_row(1, trace_id="trace_1"),  # its decision record was never stored
        feedback_row(2, signed_by="mallory", decision_record_id="dr_2026_05_01_r0"),
    ]
    rows[2]["trace_id"] = "trace_0"
    path = write_rows(tmp_path / "fb.jsonl", rows, FeedbackEntry)
    before = store.count()
    report = ingest_file("feedback", path, store)
    assert (report.new, report.unchanged) == (1, 0)
    trace, signer = report.quarantined
    assert (trace.line, trace.field, trace.stage) == (2, "trace_id", "store")
    assert "does not resolve" in trace.message
    assert (signer.line, signer.field) == (3, "signed_by")
    assert "'mallory' is not in the authorised-overrider list" in signer.message
    assert store.count() == before + 1
    again = ingest_file("feedback", path, store)
    assert (again.new, again.unchanged, len(again.quarantined)) == (0, 1, 2)
    assert store.count() == before + 1 and store.verify().ok


def test_cli_overriders_option(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    decisions = write_rows(tmp_path / "d.json", [decision_row(0)], DecisionRecord)
    feedback = write_rows(tmp_path / "fb.csv", [feedback_row(0)], FeedbackEntry)
    allowed = tmp_path / "overriders.json"
    allowed.write_text(json.dumps([OPERATOR]), encoding="utf-8")
    assert _ingest(capsys, "decisions", decisions, "--store", url)[0] == 0
    code, out, _ = _ingest(capsys, "feedback", feedback, "--store", url, "--overriders", allowed)
    assert code == 0 and out.startswith("accepted 1, quarantined 0 (1 new")
    stored = ExperienceStore(url).get(FeedbackEntry, "fb_2026_05_09_a0")
    assert stored is not None and stored.signature is not None
    code, _, err = _ingest(
        capsys, "feedback", feedback, "--store", url, "--overriders", tmp_path / "none.json"
    )
    assert code == 2 and "none.json" in err


def test_feedback_without_an_overrider_list_is_quarantined(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(tmp_path / "absent.json"))
    feedback = write_rows(tmp_path / "fb.jsonl", [feedback_row(0)], FeedbackEntry)
    code, out, _ = _ingest(capsys, "feedback", feedback, "--store", url)
    assert code == 0 and out.startswith("accepted 0, quarantined 1")
    assert "signed_by: no authorised-overrider list is configured" in out
