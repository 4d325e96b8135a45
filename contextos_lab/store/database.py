"""The store's SQL schema (append-only tables and their triggers) and how its engine is opened."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import (
    DDL,
    Column,
    Engine,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
)
from sqlalchemy.exc import (
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)

from contextos_lab.store.db_url import sqlalchemy_url

metadata = MetaData()
artifacts = Table(
    "artifacts",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("kind", String(64), nullable=False),
    Column("artifact_id", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("content_sha256", String(64), nullable=False),
    Column("prev_row_sha256", String(64), nullable=False, unique=True),
    Column("row_sha256", String(64), nullable=False, unique=True),
    Column("upstream_ids", Text, nullable=False),
    Column("upstream_sha256", String(64), nullable=True),
    Column("written_at", String(40), nullable=False),
    #: HMAC-SHA256 of row_sha256 under the store key: recomputing the chain needs the key.
    Column("row_mac", String(64), nullable=False),
    Index("ix_artifacts_kind_id", "kind", "artifact_id"),
)
#: The keyed seal of the chain's last row: removing rows from the end breaks it.
chain_head = Table(
    "chain_head",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("seq", Integer, nullable=False),
    Column("row_sha256", String(64), nullable=False),
    Column("mac", String(64), nullable=False),
)

for _op in ("UPDATE", "DELETE"):
    event.listen(
        artifacts,
        "after_create",
        DDL(
            f"CREATE TRIGGER IF NOT EXISTS artifacts_no_{_op.lower()} BEFORE {_op} ON artifacts "
            "BEGIN SELECT RAISE(ABORT, 'experience store is append-only'); END"
        ).execute_if(dialect="sqlite"),
    )
event.listen(
    artifacts,
    "after_create",
    DDL(
        "CREATE OR REPLACE FUNCTION artifacts_append_only() RETURNS trigger AS $$ "
        "BEGIN RAISE EXCEPTION 'experience store is append-only'; END $$ LANGUAGE plpgsql; "
        "CREATE TRIGGER artifacts_append_only BEFORE UPDATE OR DELETE ON artifacts "
        "FOR EACH ROW EXECUTE FUNCTION artifacts_append_only();"
    ).execute_if(dialect="postgresql"),
)


def create_tables(engine: Engine) -> None:
    """Create the tables if absent. Several processes opening a new store at once race
    between "does it exist" and "create it": the loser sees "already exists" (SQLite) or a
    unique violation on the catalogue (PostgreSQL) and simply checks again."""
    for attempt in range(10):
        try:
            metadata.create_all(engine)
            return
        except (OperationalError, IntegrityError, ProgrammingError) as exc:
            if attempt == 9 or not lost_creation_race(exc):
                raise
            time.sleep(0.05 * (attempt + 1))


#: PostgreSQL SQLSTATEs of a lost `CREATE` race: duplicate_table, unique_violation (on the
#: catalogue), duplicate_object.
_RACE_SQLSTATES = frozenset({"42P07", "23505", "42710"})
#: SQLite result codes of a database another process is writing.
_BUSY = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})


def lost_creation_race(exc: Exception) -> bool:
    """Whether `create_all` failed because another process created (or is creating) the same
    tables: read from the driver's typed code (PostgreSQL's SQLSTATE, SQLite's result code).
    SQLite reports "table ... already exists" only as its generic SQLITE_ERROR, so for that
    one code its message is all there is to read."""
    orig = getattr(exc, "orig", None)
    sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if isinstance(sqlstate, str):
        return sqlstate in _RACE_SQLSTATES
    name = getattr(orig, "sqlite_errorname", None)
    if name in _BUSY:
        return True
    return name == "SQLITE_ERROR" and "already exists" in str(orig)


def make_engine(url: str, *, create: bool) -> Engine:
    """The engine for a store URL; a SQLite file's folder is made when creating, and a
    missing file is refused otherwise."""
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            p = Path(path)
            if create:
                p.parent.mkdir(parents=True, exist_ok=True)
            elif not p.exists():
                raise FileNotFoundError(f"no experience store at {url} ({p} does not exist)")
        kwargs["connect_args"] = {"timeout": 30}
    try:
        return create_engine(sqlalchemy_url(url), **kwargs)
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise ConnectionError(f"cannot open experience store {url!r}: {exc}") from exc
