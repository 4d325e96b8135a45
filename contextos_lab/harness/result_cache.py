"""A result cache that never pays twice for the same harness call.

One row per (harness id, harness version, config, case content hash, repeat index): the
RunResult the harness returned, plus the seed it was given. Re-running a sweep, resuming a
killed one, the sampler proposing a config it already tried and the gate's baseline re-run all
read from here. A new harness version is a different key, so a changed harness is re-run.

The table lives in the study's own database (`sqlite:///…/study.db` or the study's PostgreSQL
URL), beside Optuna's tables, through SQLAlchemy Core: one store for everything a study paid
for. A journal or in-memory study gets a SQLite file (or an in-process dict) instead.
`--cache PATH` (a SQLite file, or any SQLAlchemy URL) puts it outside the study instead, so
studies in different `--out` folders share what was paid for. The key includes the harness's
version and, for a program harness, a hash of its command and declared environment.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from contextos_lab.harness.cache_flags import (
    CACHE_ENV,
    NO_CACHE_ENV,
    add_no_cache_flag,
    cache_reads_enabled,
)
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.store.close_at_exit import close_at_exit
from contextos_lab.store.db_url import sqlalchemy_url

#: The flags and their environment variables live in `cache_flags` (no SQLAlchemy for `--help`).
__all__ = ["CACHE_ENV", "NO_CACHE_ENV", "ResultCache", "add_no_cache_flag", "cache_reads_enabled"]

TABLE = "contextos_result_cache"
CACHE_FILE = "result_cache.db"
_metadata = MetaData()
_results = Table(
    TABLE,
    _metadata,
    Column("key", String(64), primary_key=True),
    Column("harness", String(200), nullable=False),
    Column("harness_version", String(200), nullable=False),
    Column("config_hash", String(64), nullable=False, index=True),
    Column("case_hash", String(64), nullable=False),
    Column("repeat", Integer, nullable=False),
    # Seeds are unsigned 32-bit: past PostgreSQL's INTEGER (signed), so BIGINT.
    Column("seed", BigInteger, nullable=True),
    Column("result", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)


def shared_cache_url() -> str | None:
    """The `--cache` location as a SQLAlchemy URL (None: the cache lives with the study)."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if not value:
        return None
    if "://" in value:
        return value
    path = Path(value)
    if path.is_dir():
        path = path / CACHE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path.resolve()}"


def config_hash(config: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_json(dict(config)))


@dataclass(frozen=True)
class HarnessKey:
    """Who answered: the harness's name and version (a version change invalidates)."""

    name: str
    version: str


def result_key(harness: HarnessKey, cfg_hash: str, case_hash: str, repeat: int) -> str:
    return sha256_hex(canonical_json([harness.name, harness.version, cfg_hash, case_hash, repeat]))


def cache_url_for(storage_url: str | None, out_dir: str | Path | None) -> str | None:
    """Where a study's cache lives: its own SQLAlchemy URL when it has one, else a SQLite file
    beside the study (journal file's folder, or `out_dir`); None = in-process only."""
    if storage_url and "://" in storage_url and not storage_url.startswith("journal:"):
        return storage_url
    if storage_url and storage_url not in ("memory", ":memory:"):
        path = storage_url.removeprefix("journal:").removeprefix("//")
        return f"sqlite:///{Path(path).resolve().parent / CACHE_FILE}"
    if out_dir is not None and storage_url is None:
        return f"sqlite:///{Path(out_dir).resolve() / CACHE_FILE}"
    return None


def open_for_study(storage_url: str, out_dir: str | Path | None = None) -> ResultCache:
    """The cache of a study stored at `storage_url`: `--cache`'s when given, else its own."""
    shared = shared_cache_url()
    if shared is not None:
        return ResultCache(shared)
    return ResultCache(cache_url_for(storage_url, out_dir if storage_url is None else None))


class ResultCache:
    """Get/put RunResult rows by key; `url=None` keeps them in this process only."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._memory: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._engine: Engine | None = _engine(url) if url else None
        if self._engine is not None:
            try:
                _metadata.create_all(self._engine, checkfirst=True)
            except (OperationalError, ProgrammingError, IntegrityError):
                # another process created it between our check and our CREATE
                _metadata.create_all(self._engine, checkfirst=True)

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Stored results (RunResult fields plus `seed`) for the keys that have one."""
        if self._engine is None:
            with self._lock:
                return {k: self._memory[k] for k in keys if k in self._memory}
        out: dict[str, dict[str, Any]] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(keys), 500):  # bounded IN lists
                chunk = list(keys[start : start + 500])
                rows = conn.execute(
                    select(_results.c.key, _results.c.result).where(_results.c.key.in_(chunk))
                )
                out.update({k: json.loads(r) for k, r in rows})
        return out

    def put_many(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Store rows (`key`, `harness`, `harness_version`, `config_hash`, `case_hash`,
        `repeat`, `seed`, `result` dict); a key already stored keeps its first result."""
        import time

        batch = [
            {**{k: v for k, v in r.items() if k != "result"}, "result": _dump(r["result"])}
            for r in rows
        ]
        if not batch:
            return 0
        now = time.time()
        for r in batch:
            r.setdefault("created_at", now)
        if self._engine is None:
            with self._lock:
                for r in batch:
                    self._memory.setdefault(r["key"], json.loads(r["result"]))
            return len(batch)
        with self._engine.begin() as conn:
            have = set(
                conn.scalars(
                    select(_results.c.key).where(_results.c.key.in_([r["key"] for r in batch]))
                )
            )
            fresh = [r for r in batch if r["key"] not in have]
            if fresh:
                try:
                    conn.execute(_results.insert(), fresh)
                except IntegrityError:  # a concurrent worker stored the same call first
                    conn.rollback()
                    return self._put_one_by_one(fresh)
        return len(fresh)

    def _put_one_by_one(self, rows: list[dict[str, Any]]) -> int:
        assert self._engine is not None
        stored = 0
        for r in rows:
            try:
                with self._engine.begin() as conn:
                    conn.execute(_results.insert(), [r])
                stored += 1
            except IntegrityError:
                continue
        return stored

    def count(self) -> int:
        if self._engine is None:
            return len(self._memory)
        with self._engine.connect() as conn:
            return len(list(conn.scalars(select(_results.c.key))))

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


def _dump(result: Mapping[str, Any]) -> str:
    return json.dumps(dict(result), default=_default, allow_nan=False, separators=(",", ":"))


def _default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(url: str) -> Engine:
    """One engine per URL per process (SQLite: wait for writers, WAL like the study)."""
    with _ENGINES_LOCK:
        if url not in _ENGINES:
            if url.startswith("sqlite"):
                engine = create_engine(url, connect_args={"timeout": 60})

                @event.listens_for(engine, "connect")
                def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                    cur = dbapi_conn.cursor()
                    cur.execute("PRAGMA journal_mode=WAL")
                    cur.execute("PRAGMA synchronous=NORMAL")
                    cur.close()

            else:
                engine = create_engine(sqlalchemy_url(url), pool_pre_ping=True)
            _ENGINES[url] = close_at_exit(engine)
        return _ENGINES[url]
