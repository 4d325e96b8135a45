"""`store.raw_rows`: the tables as `store verify` reads them, sqlite3 for a SQLite file and
SQLAlchemy Core for anything else, with the same columns and the same verdicts (issue 40)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.store.database import artifacts, chain_head
from contextos_lab.store.experience_store import ExperienceStore
from contextos_lab.store.project_binding import project_binding
from contextos_lab.store.raw_rows import (
    ARTIFACT_COLUMNS,
    BINDING_COLUMNS,
    CHAIN_HEAD_COLUMNS,
    Unreadable,
    raw_reader,
    sqlite_file,
)
from tests.factories import decision_record


def test_the_column_lists_are_the_tables_columns() -> None:
    assert tuple(artifacts.c.keys()) == ARTIFACT_COLUMNS
    assert tuple(chain_head.c.keys()) == CHAIN_HEAD_COLUMNS
    assert tuple(project_binding.c.keys()) == BINDING_COLUMNS


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///out/store.db", "out/store.db"),
        ("sqlite:////abs/store.db", "/abs/store.db"),
        ("sqlite+pysqlite:///s.db", "s.db"),
        ("sqlite://", None),  # in memory: only its engine sees it
        ("sqlite:///:memory:", None),
        ("sqlite:///s.db?mode=ro", None),  # options: SQLAlchemy reads them
        ("postgresql://u@h/db", None),
    ],
)
def test_only_a_plain_sqlite_file_is_read_with_sqlite3(url: str, path: str | None) -> None:
    assert sqlite_file(url) == (Path(path) if path else None)


def test_sqlite3_reads_the_rows_sqlalchemy_wrote(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = ExperienceStore(url)
    store.append(decision_record(1))
    store.append(decision_record(2))
    sql = f"SELECT {', '.join(ARTIFACT_COLUMNS)} FROM artifacts ORDER BY seq"
    with raw_reader(url) as raw:
        assert {"artifacts", "chain_head"} <= raw.tables()
        rows = list(raw.rows(sql))
    assert [(r.seq, r.body, r.row_sha256) for r in rows] == [
        (r.seq, r.body, r.row_sha256) for r in store.rows()
    ]


def test_a_missing_file_is_not_created_and_a_corrupt_one_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no experience store"):
        raw_reader(f"sqlite:///{tmp_path / 'none.db'}").__enter__()
    assert not (tmp_path / "none.db").exists()
    (tmp_path / "junk.db").write_bytes(b"not a database" * 100)
    with raw_reader(f"sqlite:///{tmp_path / 'junk.db'}") as raw, pytest.raises(Unreadable):
        raw.tables()


def test_an_in_memory_store_verifies_through_its_engine() -> None:
    store = ExperienceStore("sqlite://")
    store.append(decision_record(1))
    report = store.verify()
    assert report.ok and report.rows_checked == 1, str(report)
