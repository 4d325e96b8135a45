"""The experience store: every artifact the loop produces, append-only and hash-chained.

Each write is one row: kind, artifact id, canonical JSON, its SHA-256, the SHA-256 of the prior
row and of the upstream artifacts it was derived from. There is no update or delete API; SQLite
and PostgreSQL additionally refuse UPDATE/DELETE with triggers. Lifecycle-bearing artifacts
(proposals, insights, rules) get a new row per version, and a version must follow the lifecycle.
Immutable kinds (feedback, decision records, verdicts, ...) are written once; once a
lifecycle artifact has been reviewed its substance is frozen (only status, history and release
bookkeeping may change), so what an approver signed off is what gets released.

Tamper evidence: every row carries an HMAC of its row hash under the store key, and a keyed
`chain_head` seal names the last row, so neither rewriting the whole chain nor cutting rows off
its end passes `verify` without the key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypeVar, cast

from sqlalchemy import func, select
from sqlalchemy.exc import (
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)

from contextos_lab.errors import Unreachable
from contextos_lab.schemas import ENVELOPES_BY_KIND, envelope_class
from contextos_lab.schemas.base import Envelope, EnvelopeList
from contextos_lab.store.admission import (
    IMMUTABLE_KINDS,
    MUTABLE_AFTER_REVIEW,
    STATUS_MOVES,
    UNREVIEWED,
)
from contextos_lab.store.append import anchor_committed, append_once
from contextos_lab.store.chain import GENESIS, head_mac, row_hash, row_mac
from contextos_lab.store.database import artifacts, chain_head, create_tables, make_engine, metadata
from contextos_lab.store.db_url import DEFAULT_STORE_URL
from contextos_lab.store.lookups import latest, latest_row
from contextos_lab.store.records import AppendOutcome, StoredRow, StoreRefusal, VerifyReport
from contextos_lab.store.signing import load_authorised_overriders, load_signing_key

if TYPE_CHECKING:  # pandas only for `frame`: `store verify` and `ingest` never build one
    import pandas as pd

#: Names this module has always offered; they now live in the sibling modules above.
__all__ = [
    "DEFAULT_STORE_URL",
    "GENESIS",
    "IMMUTABLE_KINDS",
    "MUTABLE_AFTER_REVIEW",
    "STATUS_MOVES",
    "UNREVIEWED",
    "AppendOutcome",
    "ExperienceStore",
    "StoreRefusal",
    "StoredRow",
    "VerifyReport",
    "artifacts",
    "chain_head",
    "head_mac",
    "metadata",
    "row_hash",
    "row_mac",
]

E = TypeVar("E", bound=Envelope)


class ExperienceStore:
    """Append-only store of envelopes.

    `authorised_overriders`: operator ids allowed to sign FeedbackEntry (None: read
    `CONTEXTOS_OVERRIDERS_FILE` / `.contextos/authorised_overriders.json`).
    `signing_key`: HMAC key (None: `CONTEXTOS_SIGNING_KEY` or the key file).
    """

    def __init__(
        self,
        url: str = DEFAULT_STORE_URL,
        *,
        signing_key: bytes | None = None,
        authorised_overriders: Iterable[str] | None = None,
        create: bool = True,
        check_exists: bool = True,
    ) -> None:
        """`check_exists=False` (with `create=False`) opens whatever is there, as `verify`
        needs to name a missing table or a corrupt file instead of refusing to open it."""
        self.url = url
        self._signing_key = signing_key
        self._overriders = (
            frozenset(authorised_overriders) if authorised_overriders is not None else None
        )
        self.engine = make_engine(url, create=create)
        try:
            if create:
                create_tables(self.engine)
            elif not check_exists:
                return
            elif not self.engine.dialect.has_table(self.engine.connect(), "artifacts"):
                raise FileNotFoundError(f"no experience store at {url}")
        except (OperationalError, InterfaceError) as exc:
            if url.startswith("sqlite"):  # a local file: the user's path to fix (exit 2)
                raise ConnectionError(f"cannot open experience store {url}: {exc}") from exc
            # a server that does not answer: exit 3, which a scheduler may retry
            raise Unreachable(
                f"storage unreachable: experience store {url} does not answer: {exc}"
            ) from exc
        except SQLAlchemyError as exc:
            raise ConnectionError(f"experience store {url} is unreachable: {exc}") from exc

    # -- configuration -------------------------------------------------------------------
    @property
    def signing_key(self) -> bytes:
        if self._signing_key is None:
            self._signing_key = load_signing_key(required=True)
        assert self._signing_key is not None
        return self._signing_key

    @property
    def authorised_overriders(self) -> frozenset[str] | None:
        if self._overriders is None:
            self._overriders = load_authorised_overriders()
        return self._overriders

    # -- writing -------------------------------------------------------------------------
    def append(self, artifact: Envelope, *, upstream: Sequence[str] = ()) -> AppendOutcome:
        return self.append_many([artifact], upstream={artifact.artifact_id: upstream})[0]

    def append_many(
        self,
        items: Sequence[Envelope],
        *,
        upstream: dict[str, Sequence[str]] | None = None,
        on_refusal: Literal["raise", "skip"] = "raise",
        refusals: list[StoreRefusal] | None = None,
        before_commit: Callable[[list[StoreRefusal]], None] | None = None,
    ) -> list[AppendOutcome]:
        """Append in one transaction. With `on_refusal="skip"` refused items are collected in
        `refusals` and the rest are written; with "raise" nothing is written on any refusal.
        `before_commit(refusals)` runs inside the transaction, after every row is written and
        before the commit: if it raises, nothing is stored (ingest writes its quarantine file
        there, so a file's refused rows are on disk before any of its rows are stored)."""
        upstream = upstream or {}
        for attempt in range(20):
            try:
                outcomes = append_once(self, items, upstream, on_refusal, refusals, before_commit)
            except (IntegrityError, OperationalError) as exc:
                # Another writer extended the chain first (unique prev hash) or held the lock.
                if attempt == 19:
                    raise ConnectionError(f"could not append to {self.url}: {exc}") from exc
                if refusals is not None:
                    refusals.clear()
                time.sleep(0.02 * (attempt + 1))
                continue
            anchor_committed(self, outcomes)
            return outcomes
        raise AssertionError("unreachable")

    # -- reading -------------------------------------------------------------------------
    def get(self, model: type[E] | str, artifact_id: str) -> E | None:
        """Latest version of an artifact; `model` is the class, its name or its store kind."""
        with self.engine.connect() as conn:
            found = latest(conn, envelope_class(model).store_kind, artifact_id)
        return found  # type: ignore[return-value]

    def find(self, artifact_id: str) -> Envelope | None:
        """Latest version of an artifact by id alone, whatever its kind."""
        with self.engine.connect() as conn:
            row = latest_row(conn, artifact_id, artifacts.c.kind, artifacts.c.body)
        return ENVELOPES_BY_KIND[row.kind].model_validate_json(row.body) if row else None

    def rows(
        self, kind: str | type[Envelope] | None = None, artifact_id: str | None = None
    ) -> Iterator[StoredRow]:
        query = select(artifacts).order_by(artifacts.c.seq)
        if kind is not None:
            query = query.where(artifacts.c.kind == envelope_class(kind).store_kind)
        if artifact_id is not None:
            query = query.where(artifacts.c.artifact_id == artifact_id)
        with self.engine.connect() as conn:
            for r in conn.execute(query):
                yield StoredRow(
                    seq=r.seq,
                    kind=r.kind,
                    artifact_id=r.artifact_id,
                    body=r.body,
                    content_sha256=r.content_sha256,
                    prev_row_sha256=r.prev_row_sha256,
                    row_sha256=r.row_sha256,
                    upstream_ids=tuple(json.loads(r.upstream_ids)),
                    upstream_sha256=r.upstream_sha256,
                    written_at=r.written_at,
                )

    def upstream_of(self, artifact_id: str) -> tuple[str, ...]:
        """Upstream ids recorded on the latest row of an artifact."""
        with self.engine.connect() as conn:
            row = latest_row(conn, artifact_id, artifacts.c.upstream_ids)
        return tuple(json.loads(row.upstream_ids)) if row else ()

    def list(self, model: type[E] | str, since: datetime | None = None) -> EnvelopeList[E]:
        """Latest version of every artifact of a kind (class, class name or store kind), in
        first-written order."""
        cls = cast("type[E]", envelope_class(model))  # a name or kind resolves to its class
        latest: dict[str, E] = {}
        for row in self.rows(kind=cls.store_kind):
            latest[row.artifact_id] = cls.model_validate_json(row.body)
        items = list(latest.values())
        if since is not None:
            items = [i for i in items if (at := _artifact_time(i)) is None or at >= since]
        return EnvelopeList(items, cls)

    def frame(self, model: type[Envelope] | str, since: datetime | None = None) -> pd.DataFrame:
        return self.list(model, since=since).to_frame()

    def count(self, kind: str | type[Envelope] | None = None) -> int:
        """Stored rows (every version), of one kind if given: the class, its name
        (`"FeedbackEntry"`) or its store kind (`"feedback_entry"`); unknown names raise."""
        query = select(func.count()).select_from(artifacts)
        if kind is not None:
            query = query.where(artifacts.c.kind == envelope_class(kind).store_kind)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    # -- verification --------------------------------------------------------------------
    def verify(self) -> VerifyReport:
        """Recompute every hash, link, MAC and signature and check the anchored head; report
        the first problem as a named verdict (see `store.verify`)."""
        from contextos_lab.store.verify import verify_store

        return verify_store(self)


def _artifact_time(item: Envelope) -> datetime | None:
    for name in (
        "signed_at",
        "captured_at",
        "decided_at",
        "last_seen",
        "latest",
        "created_at",
        "computed_at",
    ):
        value = getattr(item, name, None)
        if isinstance(value, datetime):
            return value
    return None
