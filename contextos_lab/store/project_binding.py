"""A store belongs to one project: which one is recorded at its first write.

Bodies in the store are validated against a project's reason-class registry and decision keys,
so reading a store with another project's registry reports untouched rows as malformed and
compiles against the wrong bundles. The first write records the active project (its name, its
folder and a SHA-256 of its declared registry); every later command on that store uses it, and
`binding_conflict` names a `--project` that is not it.

The record lives in its own insert-only table, beside the hash chain: it says which domain reads
the chain, it is not an artifact of the loop. A registry that grew (classes added) is the same
project and gets a new record; one that lost classes the store may hold is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Column, Connection, Integer, String, Table, Text, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from contextos_lab.domain.config import ProjectError
from contextos_lab.errors import UserError
from contextos_lab.store.database import make_engine, metadata

if TYPE_CHECKING:
    from contextos_lab.domain.config import DomainConfig

project_binding = Table(
    "project_binding",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("root", Text, nullable=False),
    Column("registry_sha256", String(64), nullable=False),
    Column("reason_classes", Text, nullable=False),
    Column("recorded_at", String(40), nullable=False),
    #: HMAC-SHA256 under the store key of the row's other columns: `store verify` checks it
    Column("mac", String(64), nullable=False),
)


@dataclass(frozen=True)
class Binding:
    """The project a store belongs to, as recorded."""

    name: str
    root: Path
    registry_sha256: str
    reason_classes: frozenset[str]

    def describe(self) -> str:
        return f"{self.name} ({self.root}, registry {self.registry_sha256[:12]})"


def registry_sha256(project: DomainConfig) -> str:
    """SHA-256 of the declared registry: reason classes and decision keys, canonical JSON."""
    declared = {
        "reason_classes": {k: v.model_dump(mode="json") for k, v in project.reason_classes.items()},
        "decision_keys": {k: v.model_dump(mode="json") for k, v in project.decision_keys.items()},
    }
    text = json.dumps(declared, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def binding_of(project: DomainConfig) -> Binding:
    return Binding(
        project.name, project.root, registry_sha256(project), frozenset(project.reason_classes)
    )


def _latest(conn: Connection, key: bytes | None = None) -> Binding | None:
    """The latest binding; with `key`, None when its MAC does not hold (an altered binding
    names no project: `store verify` reports it)."""
    if "project_binding" not in set(inspect(conn).get_table_names()):
        return None
    row = conn.execute(
        select(project_binding).order_by(project_binding.c.seq.desc()).limit(1)
    ).first()
    if row is None:
        return None
    if key is not None and not hmac.compare_digest(str(row.mac), binding_mac(key, row)):
        return None
    return Binding(
        row.name, Path(row.root), row.registry_sha256, frozenset(json.loads(row.reason_classes))
    )


def recorded_project(url: str | None) -> Binding | None:
    """The project a store at `url` belongs to; None when it has none yet or cannot be read
    (the command that opens it then says why)."""
    if not url:
        return None
    from contextos_lab.store.signing import load_signing_key

    try:
        key = load_signing_key(required=False)
        engine = make_engine(url, create=False)
        with engine.connect() as conn:
            return _latest(conn, key)
    except (FileNotFoundError, ConnectionError, SQLAlchemyError, ValueError, OSError):
        return None


def binding_conflict(recorded: Binding, project: DomainConfig) -> str | None:
    """Why `project` cannot read a store recorded for `recorded` (None: it can)."""
    if project.name != recorded.name:
        return "another project"
    lost = sorted(recorded.reason_classes - set(project.reason_classes))
    if lost:
        return f"its registry lost reason classes {', '.join(lost)}"
    return None


def binding_mac(key: bytes, row: Any) -> str:
    """The MAC of one binding row (its columns but the MAC, canonical JSON)."""
    body = {c: getattr(row, c) if not isinstance(row, dict) else row[c] for c in _MACED}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


_MACED = ("seq", "name", "root", "registry_sha256", "reason_classes", "recorded_at")


def check_bindings(conn: Connection, key: bytes) -> str | None:
    """Why the binding table does not verify (None: every row's MAC holds)."""
    if "project_binding" not in set(inspect(conn).get_table_names()):
        return None
    for row in conn.execute(select(project_binding).order_by(project_binding.c.seq)):
        if not isinstance(row.mac, str) or not hmac.compare_digest(row.mac, binding_mac(key, row)):
            return f"project binding row {row.seq} does not verify (altered)"
    return None


class BindingConflict(ProjectError, UserError):
    """A write for one project to a store bound to another: the write's transaction is rolled
    back, so nothing of it is stored (any command exits 2 with this line, naming both)."""

    def __init__(self, recorded: Binding, project: DomainConfig, why: str) -> None:
        super().__init__(
            f"project {project.name} ({project.root}) cannot write to this store: it belongs to "
            f"project {recorded.describe()} ({why}, bound by a writer that got there first); "
            "nothing was stored: use another --store",
        )


def record_project(conn: Connection, project: DomainConfig, key: bytes) -> None:
    """Inside the write transaction of the rows it binds: record `project` unless the store
    already names it with this registry (a store's first write, or a registry that grew). A
    store bound to another project raises `BindingConflict`, rolling the rows back: writers
    started at once on a new store all pass the command's check (no binding yet), and the
    chain serialises their transactions (one tail, one next seq), so the first to commit binds
    the store and every later one of another project is refused here."""
    project_binding.create(conn, checkfirst=True)
    now = binding_of(project)
    last = _latest(conn)
    if last is None:
        _refuse_unnamed(project)
    if last is not None and last.registry_sha256 == now.registry_sha256:
        return
    why = binding_conflict(last, project) if last is not None else None
    if last is not None and why is not None:
        raise BindingConflict(last, project, why)
    seq = conn.execute(select(project_binding.c.seq).order_by(project_binding.c.seq.desc())).first()
    values = {
        "seq": (seq.seq if seq else 0) + 1,
        "name": now.name,
        "root": str(now.root),
        "registry_sha256": now.registry_sha256,
        "reason_classes": json.dumps(sorted(now.reason_classes)),
        "recorded_at": datetime.now(UTC).isoformat(),
    }
    conn.execute(project_binding.insert().values(**values, mac=binding_mac(key, values)))


def _refuse_unnamed(project: DomainConfig) -> None:
    """A first write binds the store for good: refuse it (the transaction rolls back, nothing
    is stored) when nobody named the project, rather than bind the bundled example."""
    from contextos_lab.domain.active import project_named
    from contextos_lab.errors import UserError

    if not project_named():
        raise UserError(
            f"this store has no project yet and none was named (the bundled example "
            f"{project.name} is only a fallback): pass --project DIR (or set $CONTEXTOS_PROJECT) "
            "to name the store's project; nothing was written"
        )
