"""Open an Optuna storage from a `--storage` URL (RDB, journal or memory), shared by processes."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from optuna.storages import BaseStorage, InMemoryStorage, JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend

from contextos_lab.errors import EXIT_STORAGE, EXIT_USAGE, Unreachable
from contextos_lab.store.close_at_exit import close_at_exit
from contextos_lab.store.db_url import STORAGE_ENV, sqlalchemy_url

log = logging.getLogger(__name__)


class StorageUnreachable(Unreachable, RuntimeError):
    """The study storage cannot be opened. `code` 2 (`EXIT_USAGE`) when the URL cannot work as
    given (unknown scheme, missing folder, driver not installed), 3 when a server does not
    answer (`errors` has the table)."""


def default_storage_url(out_dir: str | Path) -> str:
    """`$CONTEXTOS_STORAGE_URL` (a team's shared server), else a SQLite file in `out_dir`."""
    return os.environ.get(STORAGE_ENV) or f"sqlite:///{Path(out_dir).resolve() / 'study.db'}"


def journal_path(url: str) -> str | None:
    """The journal file a URL names, or None when it is not a journal URL."""
    if url.startswith("journal:"):
        rest = url.removeprefix("journal:")
        return rest[2:] if rest.startswith("//") else rest
    if "://" not in url and url.endswith((".log", ".journal")):
        return url
    return None


def redact(url: str) -> str:
    """The URL with any password hidden (for error messages and results files)."""
    if "://" not in url or "@" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    if ":" not in creds:  # no password to hide
        return url
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def open_storage(url: str) -> BaseStorage:
    """An Optuna storage for `url`, or StorageUnreachable saying which and why."""
    if url in ("memory", ":memory:"):
        return InMemoryStorage()
    path = journal_path(url)
    try:
        if path is not None:
            parent = Path(path).resolve().parent
            if not parent.is_dir():
                raise FileNotFoundError(f"folder {parent} does not exist")
            _repair_journal_tail(Path(path))
            return JournalStorage(_FlushedJournalFileBackend(path))
        engine_kwargs: dict[str, Any] = {}
        if url.startswith("sqlite"):
            db = url.split(":///", 1)[-1]
            if db and db != ":memory:" and not Path(db).resolve().parent.is_dir():
                raise FileNotFoundError(f"folder {Path(db).resolve().parent} does not exist")
            # Several worker processes write one file: wait for the lock instead of failing.
            engine_kwargs = {"connect_args": {"timeout": 60}}
            return _rdb_storage(url, engine_kwargs)
        full = sqlalchemy_url(url)
        if full.startswith("postgresql+psycopg"):
            # Commit without waiting for the WAL flush (per session; the server's own default
            # is untouched): the same trade as SQLite's synchronous=NORMAL and the unsynced
            # journal above. A server crash can lose the last commits, never corrupt the study.
            engine_kwargs = {"connect_args": {"options": "-c synchronous_commit=off"}}
        return _rdb_storage(full, engine_kwargs)
    except Exception as exc:
        from sqlalchemy.exc import ArgumentError

        as_given = isinstance(exc, OSError | ImportError | ValueError | ArgumentError)
        raise StorageUnreachable(
            ("" if as_given else "storage unreachable: ")
            + f"cannot open study storage {redact(url)!r}: {type(exc).__name__}: {exc}",
            code=EXIT_USAGE if as_given else EXIT_STORAGE,
        ) from exc


def _rdb_storage(url: str, engine_kwargs: dict[str, Any]) -> RDBStorage:
    """RDBStorage, safe when several processes open a new storage together.

    Optuna's first open creates the tables, inserts its one version row and stamps the alembic
    revision, each a check-then-write: a second process in between sees "already exists", a
    duplicate version row, or no revision yet (an assertion). For a SQLite file the first open
    is serialised by a lock file beside it; for a server database a failed open is retried
    (the next try finds the schema complete) and the last failure is raised."""
    lock_path = _sqlite_file(url)
    for attempt in range(10):
        try:
            if lock_path is None:
                return RDBStorage(url, engine_kwargs=engine_kwargs)
            with _file_lock(lock_path.with_name(f".{lock_path.name}.init.lock")):
                storage = RDBStorage(url, engine_kwargs=engine_kwargs)
                _tune_sqlite(storage)  # switching to WAL also wants the file to itself
                close_at_exit(storage.engine)
                return storage
        except Exception:  # retried, then re-raised: see the docstring
            if attempt == 9:
                raise
            time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


def _sqlite_file(url: str) -> Path | None:
    if not url.startswith("sqlite"):
        return None
    db = url.split(":///", 1)[-1]
    return Path(db).resolve() if db and db != ":memory:" else None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    import fcntl

    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tune_sqlite(storage: RDBStorage) -> None:
    """WAL (persistent in the file) lets workers read while one writes; `synchronous=NORMAL`
    commits without an fsync per write. A crash can lose the last commits, never corrupt."""
    from sqlalchemy import event

    engine = storage.engine

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    engine.dispose()
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")


class _FlushedJournalFileBackend(JournalFileBackend):
    """Optuna's journal file, appended under its lock and flushed to the OS, without an fsync
    per append: the same trade as SQLite's `synchronous=NORMAL` above. Other processes see
    each record as soon as it is flushed; only an OS crash or power loss can drop the last
    records, and a torn last line is repaired by `_repair_journal_tail` on the next open.
    (An fsync per append was ~14 per trial and ~25 ms of framework time per trial here.)"""

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        data = "\n".join(json.dumps(entry, separators=(",", ":")) for entry in logs) + "\n"
        lock = self._lock
        lock.acquire()  # blocks (with backoff) until this process holds the journal lock
        try:
            with open(self._file_path, "ab") as f:
                f.write(data.encode("utf-8"))
                f.flush()
        finally:
            lock.release()


def _repair_journal_tail(path: Path) -> None:
    """Drop a half-written last line left by a worker killed mid-append (otherwise the next
    append would glue onto it and corrupt the journal)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return
        f.truncate(data.rfind(b"\n") + 1)
        log.warning("journal %s: dropped a partial last record from an interrupted write", path)
