"""A store's tables as stored, read with sqlite3 for a SQLite file and SQLAlchemy Core otherwise.

`store verify` and the project binding read a few tables column by column and judge every value
themselves, so they need no table objects: for a SQLite file the standard library's sqlite3 reads
them without loading SQLAlchemy (a third of a second of imports, issue 40). Any other URL
(PostgreSQL, an in-memory SQLite only its engine sees, a URL with options) is read through
SQLAlchemy Core with the same SQL. Either way rows have attribute access and any driver error is
`Unreadable`, so the callers are one code path.
"""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contextos_lab.errors import ContextosError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

#: The columns of each table, in `store.database`'s order (tests/store/test_raw_rows.py checks).
ARTIFACT_COLUMNS = (
    "seq",
    "kind",
    "artifact_id",
    "body",
    "content_sha256",
    "prev_row_sha256",
    "row_sha256",
    "upstream_ids",
    "upstream_sha256",
    "written_at",
    "row_mac",
)
CHAIN_HEAD_COLUMNS = ("id", "seq", "row_sha256", "mac")
BINDING_COLUMNS = ("seq", "name", "root", "registry_sha256", "reason_classes", "recorded_at", "mac")


class Unreadable(ContextosError):
    """The database, or a table of it, cannot be read (any driver's error, first line kept);
    `store verify` turns it into its `unreadable_database` verdict."""


class RawReader(Protocol):
    def tables(self) -> set[str]: ...

    def rows(self, sql: str) -> Iterator[Any]: ...


def select_sql(table: str, columns: tuple[str, ...], order: str = "seq") -> str:
    """`SELECT columns FROM table ORDER BY order`: the names are this module's constants."""
    return f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"


def sqlite_file(url: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` URL; None where only SQLAlchemy should open it."""
    scheme, sep, path = url.partition(":///")
    if scheme not in ("sqlite", "sqlite+pysqlite") or not sep or not path:
        return None
    if path == ":memory:" or "?" in path:
        return None
    return Path(path)


@contextmanager
def raw_reader(url: str, engine: Engine | None = None) -> Iterator[RawReader]:
    """A reader of the store at `url` (`engine`: the one a caller already has, else made).

    A SQLite file that does not exist is `FileNotFoundError` (nothing is created); a server
    that does not answer is `Unreadable`."""
    path = sqlite_file(url)
    if path is not None:
        if not path.exists():
            raise FileNotFoundError(f"no experience store at {url} ({path} does not exist)")
        conn = sqlite3.connect(path, timeout=30)  # as `store.database.make_engine` opens it
        conn.row_factory = _named_row
        try:
            yield _Sqlite(conn)
        finally:
            conn.close()
        return
    from sqlalchemy.exc import SQLAlchemyError

    from contextos_lab.store.database import make_engine

    engine = engine or make_engine(url, create=False)
    try:
        connection = engine.connect()
    except SQLAlchemyError as exc:
        raise Unreadable(_first_line(exc)) from exc
    with connection:
        yield _Core(connection)


class _Sqlite:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def tables(self) -> set[str]:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        return {row[0] for row in self.rows(sql)}

    def rows(self, sql: str) -> Iterator[Any]:
        try:
            yield from self._conn.execute(sql)
        except sqlite3.Error as exc:
            raise Unreadable(_first_line(exc)) from exc


class _Core:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def tables(self) -> set[str]:
        from sqlalchemy import inspect
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return set(inspect(self._conn).get_table_names())
        except SQLAlchemyError as exc:
            raise Unreadable(_first_line(exc)) from exc

    def rows(self, sql: str) -> Iterator[Any]:
        from sqlalchemy import text
        from sqlalchemy.exc import SQLAlchemyError

        try:
            yield from self._conn.execute(text(sql))
        except SQLAlchemyError as exc:
            raise Unreadable(_first_line(exc)) from exc


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _named_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Any:
    return _row_type(tuple(d[0] for d in cursor.description))(*row)


@cache
def _row_type(fields: tuple[str, ...]) -> type:
    return namedtuple("Row", fields, rename=True)
