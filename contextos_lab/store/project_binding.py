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
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import Column, Connection, Integer, String, Table, Text, inspect, select

from contextos_lab.domain.config import ProjectError
from contextos_lab.errors import UserError
from contextos_lab.store.binding_read import (
    Binding,
    binding_conflict,
    binding_mac,
    recorded_project,
)
from contextos_lab.store.database import metadata

if TYPE_CHECKING:
    from contextos_lab.domain.config import DomainConfig

#: Names this module has always offered; the reading half lives in `store.binding_read`.
__all__ = [
    "Binding",
    "BindingConflict",
    "binding_conflict",
    "binding_mac",
    "binding_of",
    "record_project",
    "recorded_project",
    "registry_sha256",
]

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


def _latest(conn: Connection) -> Binding | None:
    """The latest binding, read inside a writer's transaction."""
    if "project_binding" not in set(inspect(conn).get_table_names()):
        return None
    row = conn.execute(
        select(project_binding).order_by(project_binding.c.seq.desc()).limit(1)
    ).first()
    return None if row is None else Binding.from_row(row)


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
