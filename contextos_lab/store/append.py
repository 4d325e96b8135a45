"""One append transaction: admit each item, chain and MAC its row, seal the head; then anchor."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select

from contextos_lab.schemas.base import Envelope, sha256_hex
from contextos_lab.store.admission import prepare
from contextos_lab.store.anchor import advance_anchor
from contextos_lab.store.chain import GENESIS, row_hash, row_mac, seal_head
from contextos_lab.store.database import artifacts, chain_head
from contextos_lab.store.lookups import Pending, latest, upstream_hash
from contextos_lab.store.project_binding import record_project
from contextos_lab.store.records import AppendOutcome, StoreRefusal

if TYPE_CHECKING:
    from contextos_lab.store.handle import StoreHandle


def append_once(
    store: StoreHandle,
    items: Sequence[Envelope],
    upstream: dict[str, Sequence[str]],
    on_refusal: Literal["raise", "skip"],
    refusals: list[StoreRefusal] | None,
    before_commit: Callable[[list[StoreRefusal]], None] | None = None,
) -> list[AppendOutcome]:
    """One attempt at `ExperienceStore.append_many`: a single transaction that reads the
    chain's tail, writes a row per admitted, changed item and seals the new head."""
    outcomes: list[AppendOutcome] = []
    refused: list[StoreRefusal] = []
    with store.engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("SELECT 1")  # open the transaction before reading the tail
        last = conn.execute(
            select(artifacts.c.seq, artifacts.c.row_sha256)
            .order_by(artifacts.c.seq.desc())
            .limit(1)
        ).first()
        seq, prev = (last.seq, last.row_sha256) if last else (0, GENESIS)
        pending: Pending = {}
        for item in items:
            try:
                prepared, ups = prepare(
                    store, conn, item, upstream.get(item.artifact_id, ()), pending
                )
            except StoreRefusal as refusal:
                if on_refusal == "raise":
                    raise
                refused.append(refusal)
                if refusals is not None:
                    refusals.append(refusal)
                continue
            key = (prepared.store_kind, prepared.artifact_id)
            current = pending.get(key) or latest(conn, *key)
            if current is not None and current.content_hash() == prepared.content_hash():
                outcomes.append(
                    AppendOutcome(
                        prepared.artifact_id, prepared.store_kind, "unchanged", None, current
                    )
                )
                continue
            seq += 1
            rh = _write_row(store, conn, prepared, ups, pending, seq, prev)
            prev = rh
            pending[key] = prepared
            outcomes.append(
                AppendOutcome(prepared.artifact_id, prepared.store_kind, "stored", seq, prepared)
            )
        if any(o.status == "stored" for o in outcomes):
            seal_head(conn, store.signing_key, seq, prev)
            from contextos_lab.domain.active import active_project

            # the store's project, at its first write (MACed: `store verify` checks it)
            record_project(conn, active_project(), store.signing_key)
        if before_commit is not None:
            before_commit(refused)
    return outcomes


def _write_row(
    store: StoreHandle,
    conn: Any,
    prepared: Envelope,
    ups: Sequence[str],
    pending: Pending,
    seq: int,
    prev: str,
) -> str:
    """Insert the item as row `seq`, chained to the row hash `prev` and MACed; its row hash."""
    up_sha = upstream_hash(conn, ups, pending)
    body = prepared.canonical()
    content_sha = sha256_hex(body)
    written_at = datetime.now(UTC).isoformat()
    rh = row_hash(
        seq,
        prepared.store_kind,
        prepared.artifact_id,
        content_sha,
        prev,
        ups,
        up_sha,
        written_at,
    )
    conn.execute(
        artifacts.insert().values(
            seq=seq,
            kind=prepared.store_kind,
            artifact_id=prepared.artifact_id,
            body=body,
            content_sha256=content_sha,
            prev_row_sha256=prev,
            row_sha256=rh,
            upstream_ids=json.dumps(list(ups)),
            upstream_sha256=up_sha,
            written_at=written_at,
            row_mac=row_mac(store.signing_key, rh),
        )
    )
    return rh


def anchor_committed(store: StoreHandle, outcomes: list[AppendOutcome]) -> None:
    """Record the committed head outside the database (see `store.anchor`)."""
    if not any(o.status == "stored" for o in outcomes):
        return
    with store.engine.connect() as conn:
        head = conn.execute(select(chain_head).where(chain_head.c.id == 1)).first()
    if head is not None:
        advance_anchor(store.url, store.signing_key, head.seq, head.row_sha256)
