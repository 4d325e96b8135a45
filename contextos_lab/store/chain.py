"""The hash chain: each row's hash, its keyed MAC, and the keyed seal of the chain's head."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from contextos_lab.schemas.canonical import canonical_json, sha256_hex

GENESIS = "0" * 64


def row_hash(
    seq: int,
    kind: str,
    artifact_id: str,
    content_sha256: str,
    prev_row_sha256: str,
    upstream_ids: Sequence[str],
    upstream_sha256: str | None,
    written_at: str,
) -> str:
    """SHA-256 of a row's fields, its predecessor's hash included: the link of the chain."""
    return sha256_hex(
        canonical_json(
            [
                seq,
                kind,
                artifact_id,
                content_sha256,
                prev_row_sha256,
                list(upstream_ids),
                upstream_sha256,
                written_at,
            ]
        )
    )


def row_mac(key: bytes, row_sha256: str) -> str:
    """HMAC of a row hash under the store key: recomputing the chain needs the key."""
    return hmac.new(key, row_sha256.encode("ascii"), hashlib.sha256).hexdigest()


def head_mac(key: bytes, seq: int, row_sha256: str) -> str:
    """HMAC sealing which row is the chain's last: cutting rows off the end breaks it."""
    return hmac.new(key, f"head:{seq}:{row_sha256}".encode("ascii"), hashlib.sha256).hexdigest()


def seal_head(conn: Any, key: bytes, seq: int, last_row_sha256: str) -> None:
    """Write (or move) the keyed seal of the chain's last row, inside the writer's transaction."""
    from contextos_lab.store.database import chain_head  # SQLAlchemy for writers, not `verify`

    values = {
        "seq": seq,
        "row_sha256": last_row_sha256,
        "mac": head_mac(key, seq, last_row_sha256),
    }
    updated = conn.execute(chain_head.update().where(chain_head.c.id == 1).values(**values))
    if updated.rowcount == 0:
        conn.execute(chain_head.insert().values(id=1, **values))
