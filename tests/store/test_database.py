"""A store opened by several processes at once retries only a lost `CREATE` race, told by the
driver's typed code (SQLite's "already exists" is a generic SQLITE_ERROR: its words are read
for that one code only)."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import OperationalError, ProgrammingError

from contextos_lab.store.database import lost_creation_race


def _sqlite_error(sql: str) -> OperationalError:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (x)")
    try:
        con.execute(sql)
    except sqlite3.OperationalError as exc:
        return OperationalError(sql, None, exc)
    raise AssertionError(f"{sql} did not fail")


class _PgError(Exception):
    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def test_sqlite_table_already_exists_is_a_lost_race() -> None:
    assert lost_creation_race(_sqlite_error("CREATE TABLE t (x)"))


def test_another_sqlite_error_is_not() -> None:
    assert not lost_creation_race(_sqlite_error("SELECT * FROM missing"))


def test_a_busy_sqlite_database_is_told_by_its_code_not_its_words() -> None:
    busy = sqlite3.OperationalError("the file is held")  # no "locked" in the words
    busy.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
    assert lost_creation_race(OperationalError("CREATE TABLE t (x)", None, busy))


@pytest.mark.parametrize(
    ("message", "sqlstate", "lost"),
    [
        ("relation exists", "42P07", True),  # duplicate_table, whatever the words
        ('duplicate key value violates "pg_type_typname_nsp_index"', "23505", True),
        ("permission denied: table already exists?", "42501", False),  # the code decides
    ],
)
def test_postgresql_is_told_by_sqlstate(message: str, sqlstate: str, lost: bool) -> None:
    exc = ProgrammingError("CREATE TABLE t (x)", None, _PgError(message, sqlstate))
    assert lost_creation_race(exc) is lost
