"""Tamper suite: every way of altering a store's file is caught by `store verify` with a named
verdict (exit 1), never a traceback; concurrent first use of a new store loses nothing."""

from __future__ import annotations

import multiprocessing as mp
import shutil
import sqlite3
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.store import ExperienceStore
from contextos_lab.store.anchor import anchor_path
from contextos_lab.store.experience_store import head_mac, row_mac
from tests.factories import decision_record


def _url(db: Path) -> str:
    return f"sqlite:///{db}"


def _seed(db: Path, start: int, n: int) -> None:
    store = ExperienceStore(_url(db))
    for i in range(start, start + n):
        store.append(decision_record(i))


def _sql(db: Path, *statements: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER IF EXISTS artifacts_no_update")
        conn.execute("DROP TRIGGER IF EXISTS artifacts_no_delete")
        for statement in statements:
            conn.execute(statement)


def _verdict(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    code = main(["store", "verify", "--store", _url(db)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    assert code == 1, out
    assert out.err.count("\n") == 1 and "TAMPERED [" in out.err
    return out.err.split("TAMPERED [", 1)[1].split("]", 1)[0]


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "exp.db"
    _seed(path, 0, 4)
    assert main(["store", "verify", "--store", _url(path)]) == 0
    assert "warning" not in capsys.readouterr().out  # anchored: no warning
    return path


def test_deleting_every_row_is_caught(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(db, "DELETE FROM artifacts", "DELETE FROM chain_head")
    assert _verdict(db, capsys) == "rows_deleted"


def test_truncation_is_caught_by_the_seal(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(db, "DELETE FROM artifacts WHERE seq > 2")
    assert _verdict(db, capsys) == "rows_removed"


def test_truncation_with_the_seal_removed_is_caught_by_the_anchor(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sql(db, "DELETE FROM artifacts WHERE seq > 2", "DELETE FROM chain_head")
    assert _verdict(db, capsys) == "head_missing"


def test_rollback_to_an_earlier_sealed_copy_is_caught(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(db, tmp_path / "old.db")
    _seed(db, 10, 2)
    shutil.copy(tmp_path / "old.db", db)  # a valid chain with its own valid seal, but older
    assert ExperienceStore(_url(db)).verify().rows_checked == 4
    assert _verdict(db, capsys) == "rolled_back"


def test_re_signing_with_a_key_of_ones_own_is_caught(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = b"attacker-key"  # holds the database, not the store key
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT seq, row_sha256 FROM artifacts").fetchall()
        conn.execute("DROP TRIGGER artifacts_no_update")
        for seq, rh in rows:
            conn.execute(
                "UPDATE artifacts SET row_mac = ? WHERE seq = ?", (row_mac(forged, rh), seq)
            )
        seq, rh = rows[-1]
        conn.execute("UPDATE chain_head SET mac = ?", (head_mac(forged, seq, rh),))
    assert _verdict(db, capsys) == "row_mac_invalid"


@pytest.mark.parametrize(
    ("statement", "verdict"),
    [
        ("UPDATE artifacts SET upstream_ids = '[not json' WHERE seq = 2", "malformed_row"),
        ("UPDATE artifacts SET upstream_ids = '{\"a\": 1}' WHERE seq = 2", "malformed_row"),
        ("UPDATE artifacts SET body = X'FFFE00' WHERE seq = 2", "malformed_row"),
        ("UPDATE artifacts SET body = '{\"record_id\": Infinity' WHERE seq = 2", "body_altered"),
        ("UPDATE artifacts SET written_at = 'yesterday' WHERE seq = 3", "metadata_altered"),
        ("UPDATE chain_head SET seq = 'x'", "malformed_row"),
        ("INSERT INTO chain_head VALUES (2, 1, 'x', 'y')", "malformed_row"),
        ("DROP TABLE chain_head", "missing_table"),
        ("DROP TABLE artifacts", "missing_table"),
    ],
)
def test_malformed_rows_and_tables_are_named_verdicts(
    db: Path, capsys: pytest.CaptureFixture[str], statement: str, verdict: str
) -> None:
    _sql(db, statement)
    assert _verdict(db, capsys) == verdict


@pytest.mark.parametrize("offset", [0, 4096, -200])
def test_corrupt_file_bytes_are_a_verdict(
    db: Path, capsys: pytest.CaptureFixture[str], offset: int
) -> None:
    data = bytearray(db.read_bytes())
    start = offset if offset >= 0 else len(data) + offset
    data[start : start + 100] = b"\x5a" * 100
    db.write_bytes(bytes(data))
    assert _verdict(db, capsys) in {"unreadable_database", "body_altered", "malformed_row"}


def test_an_unreadable_anchor_is_a_verdict(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    anchor_path(_url(db)).write_text("{oops", encoding="utf-8")
    assert _verdict(db, capsys) == "anchor_unreadable"


def test_a_store_without_anchor_verifies_with_a_warning(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    anchor_path(_url(db)).unlink()
    report = ExperienceStore(_url(db)).verify()
    assert report.ok and "no anchor" in report.warnings[0]


def _ingest_worker(url: str, start: int, barrier: mp.synchronize.Barrier) -> None:
    barrier.wait()
    store = ExperienceStore(url)
    for i in range(start, start + 5):
        store.append(decision_record(i))


def test_concurrent_first_use_of_a_new_store_loses_nothing(tmp_path: Path) -> None:
    url = _url(tmp_path / "new" / "exp.db")
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_ingest_worker, args=(url, 100 * k, barrier)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    store = ExperienceStore(url)
    assert store.count() == 20
    report = store.verify()
    assert report.ok and not report.warnings, report


def test_a_store_recreated_after_deletion_is_flagged_until_its_anchor_is_retired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deleting a store file and starting a new one at the same path looks like a rewrite to
    `verify` (rightly: nothing tells the two apart); a caller that creates the new store on
    purpose retires the old anchor, which is kept renamed, and the new chain verifies."""
    from contextos_lab.store.anchor import retire_anchor

    db = tmp_path / "exp.db"
    _seed(db, 0, 3)
    db.unlink()
    _seed(db, 10, 3)
    assert _verdict(db, capsys) == "chain_replaced"
    old = anchor_path(_url(db)).read_text()
    db.unlink()
    retired = retire_anchor(_url(db))
    assert retired is not None and retired.read_text() == old
    _seed(db, 10, 3)
    capsys.readouterr()
    assert main(["store", "verify", "--store", _url(db)]) == 0
    assert retire_anchor(_url(tmp_path / "never.db")) is None
