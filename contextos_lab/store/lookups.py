"""Reads a write makes inside its transaction, counting rows written earlier in it (`pending`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from contextos_lab.schemas import ENVELOPES_BY_KIND
from contextos_lab.schemas.base import Envelope, canonical_json, sha256_hex
from contextos_lab.store.database import artifacts

#: Envelopes written earlier in the same transaction, by (store kind, artifact id).
Pending = dict[tuple[str, str], Envelope]


def latest(conn: Any, kind: str, artifact_id: str) -> Envelope | None:
    """The latest stored version of an artifact of a kind, or None."""
    row = conn.execute(
        select(artifacts.c.body)
        .where(artifacts.c.kind == kind, artifacts.c.artifact_id == artifact_id)
        .order_by(artifacts.c.seq.desc())
        .limit(1)
    ).first()
    return ENVELOPES_BY_KIND[kind].model_validate_json(row.body) if row else None


def latest_row(conn: Any, artifact_id: str, *columns: Any) -> Any:
    """These columns of the latest stored row of an artifact id (any kind), or None."""
    return conn.execute(
        select(*columns)
        .where(artifacts.c.artifact_id == artifact_id)
        .order_by(artifacts.c.seq.desc())
        .limit(1)
    ).first()


def exists_any(conn: Any, artifact_id: str, pending: Pending) -> bool:
    """Whether an artifact of any kind is stored or pending under this id."""
    if any(aid == artifact_id for _, aid in pending):
        return True
    row = conn.execute(
        select(artifacts.c.seq).where(artifacts.c.artifact_id == artifact_id).limit(1)
    ).first()
    return row is not None


def upstream_hash(conn: Any, ups: Sequence[str], pending: Pending) -> str | None:
    """SHA-256 over the content hashes of a row's upstream artifacts (None without any)."""
    if not ups:
        return None
    hashes = []
    for up in ups:
        hit = next((e for (_, aid), e in pending.items() if aid == up), None)
        if hit is not None:
            hashes.append(hit.content_hash())
            continue
        hashes.append(latest_row(conn, up, artifacts.c.content_sha256).content_sha256)
    return sha256_hex(canonical_json(hashes))
