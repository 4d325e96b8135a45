"""A store's project binding as read back: the latest record and the MAC each row carries.

Apart from `store.project_binding` (which writes the record inside SQLAlchemy transactions) so
that every command naming a `--store` learns its project, and `store verify` checks the
records, from raw rows (`store.raw_rows`: sqlite3 for a SQLite file) without SQLAlchemy.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.store.raw_rows import BINDING_COLUMNS, RawReader, Unreadable, raw_reader

if TYPE_CHECKING:
    from contextos_lab.domain.config import DomainConfig

#: The columns a binding's MAC covers (all but the MAC).
_MACED = ("seq", "name", "root", "registry_sha256", "reason_classes", "recorded_at")


@dataclass(frozen=True)
class Binding:
    """The project a store belongs to, as recorded."""

    name: str
    root: Path
    registry_sha256: str
    reason_classes: frozenset[str]

    def describe(self) -> str:
        return f"{self.name} ({self.root}, registry {self.registry_sha256[:12]})"

    @classmethod
    def from_row(cls, row: Any) -> Binding:
        names = frozenset(json.loads(row.reason_classes))
        return cls(row.name, Path(row.root), row.registry_sha256, names)


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


def mac_holds(key: bytes | None, row: Any) -> bool:
    """Whether a row's MAC verifies (always, without a key to check it with)."""
    return key is None or hmac.compare_digest(str(row.mac), binding_mac(key, row))


def recorded_project(url: str | None) -> Binding | None:
    """The project a store at `url` belongs to; None when it has none yet, cannot be read, or
    its latest record does not verify (an altered binding names no project: `store verify`
    reports it). The command that opens the store then says why."""
    if not url:
        return None
    from contextos_lab.store.signing_key import load_signing_key

    try:
        key = load_signing_key(required=False)
        with raw_reader(url) as reader:
            row = _latest_row(reader)
        if row is None or not mac_holds(key, row):
            return None
        return Binding.from_row(row)
    except (FileNotFoundError, ConnectionError, Unreadable, ValueError, OSError):
        return None


def _latest_row(reader: RawReader) -> Any:
    if "project_binding" not in reader.tables():
        return None
    sql = f"SELECT {', '.join(BINDING_COLUMNS)} FROM project_binding ORDER BY seq DESC LIMIT 1"
    return next(reader.rows(sql), None)


def check_binding_rows(reader: RawReader, key: bytes) -> str | None:
    """Why the binding table does not verify (None: every row's MAC holds, or there is none)."""
    if "project_binding" not in reader.tables():
        return None
    sql = f"SELECT {', '.join(BINDING_COLUMNS)} FROM project_binding ORDER BY seq"
    for row in reader.rows(sql):
        if not isinstance(row.mac, str) or not mac_holds(key, row):
            return f"project binding row {row.seq} does not verify (altered)"
    return None
