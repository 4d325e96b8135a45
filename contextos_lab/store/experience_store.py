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

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import pandas as pd
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
    func,
    select,
)
from sqlalchemy.exc import (
    IntegrityError,
    InterfaceError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)

from contextos_lab.errors import Unreachable
from contextos_lab.schemas import ENVELOPES_BY_KIND, envelope_class
from contextos_lab.schemas.base import Envelope, EnvelopeList, canonical_json, sha256_hex
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.lifecycle import check_transition
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.store.anchor import advance_anchor
from contextos_lab.store.db_url import sqlalchemy_url
from contextos_lab.store.signing import (
    load_authorised_overriders,
    load_signing_key,
    sign_entry,
    signature_valid,
)
from contextos_lab.store.upstream import upstream_ids_of

DEFAULT_STORE_URL = "sqlite:///.contextos/experience.db"
GENESIS = "0" * 64

#: Kinds written exactly once; a later version is refused (seed 000: "signed and immutable").
IMMUTABLE_KINDS: frozenset[str] = frozenset(
    {
        "feedback_entry",
        "feedback_record",
        "decision_record",
        "scorecard",
        "replay_verdict",
        "replay_packet",
        "insight_cluster",
        "monitor_verdict",
        "source_closure",
        "review_verdict",
        "monitor_window",
    }
)
#: Kinds whose `status` is not the proposal lifecycle: the moves a new version may make
#: (a Note is acted on or dismissed once; a ResearchTask runs, then completes or is refused).
STATUS_MOVES: dict[str, dict[str, frozenset[str]]] = {
    "note": {"open": frozenset({"acted_on", "dismissed"})},
    "research_task": {
        "queued": frozenset({"running", "completed", "refused"}),
        "running": frozenset({"completed", "refused"}),
    },
}

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


class StoreRefusal(ValueError):
    """A write the store will not take; nothing was written. Names the artifact and why."""

    def __init__(self, kind: str, artifact_id: str, reason: str) -> None:
        self.kind, self.artifact_id, self.reason = kind, artifact_id, reason
        super().__init__(f"refused {kind} {artifact_id}: {reason}")


@dataclass(frozen=True)
class StoredRow:
    seq: int
    kind: str
    artifact_id: str
    body: str
    content_sha256: str
    prev_row_sha256: str
    row_sha256: str
    upstream_ids: tuple[str, ...]
    upstream_sha256: str | None
    written_at: str

    def envelope(self) -> Envelope:
        return ENVELOPES_BY_KIND[self.kind].model_validate_json(self.body)


@dataclass(frozen=True)
class AppendOutcome:
    artifact_id: str
    kind: str
    status: Literal["stored", "unchanged"]
    seq: int | None
    artifact: Envelope


@dataclass
class VerifyReport:
    ok: bool
    rows_checked: int
    first_bad_seq: int | None = None
    first_bad_id: str | None = None
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: A stable name for what failed (`rows_deleted`, `rolled_back`, `row_mac_invalid`, ...).
    verdict: str | None = None

    def __str__(self) -> str:
        if self.ok:
            text = f"ok: {self.rows_checked} rows, chain, seal, anchor and signatures hold"
            return "; ".join([text, *(f"warning: {w}" for w in self.warnings)])
        where = (
            f"row seq={self.first_bad_seq} id={self.first_bad_id}: " if self.first_bad_id else ""
        )
        return (
            f"TAMPERED [{self.verdict}]: {where}{self.reason} "
            f"({self.rows_checked} rows checked before it)"
        )


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
    return hmac.new(key, row_sha256.encode("ascii"), hashlib.sha256).hexdigest()


def head_mac(key: bytes, seq: int, row_sha256: str) -> str:
    return hmac.new(key, f"head:{seq}:{row_sha256}".encode("ascii"), hashlib.sha256).hexdigest()


#: Fields a reviewed artifact may still change: lifecycle and release bookkeeping only.
MUTABLE_AFTER_REVIEW: frozenset[str] = frozenset(
    {
        "status",
        "history",
        "reviewer_verdicts",
        "released_at",
        "released_by",
        "pinned_baseline",
        "effective_window",
        "lineage",
        "report",
        "confirmation",
    }
)
UNREVIEWED = frozenset({"proposed", "in_replay", "ready_for_review"})

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
        self.engine = _make_engine(url, create=create)
        try:
            if create:
                _create_tables(self.engine)
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
                outcomes = self._append_many_once(
                    items, upstream, on_refusal, refusals, before_commit
                )
            except (IntegrityError, OperationalError) as exc:
                # Another writer extended the chain first (unique prev hash) or held the lock.
                if attempt == 19:
                    raise ConnectionError(f"could not append to {self.url}: {exc}") from exc
                if refusals is not None:
                    refusals.clear()
                time.sleep(0.02 * (attempt + 1))
                continue
            self._anchor(outcomes)
            return outcomes
        raise AssertionError("unreachable")

    def _append_many_once(
        self,
        items: Sequence[Envelope],
        upstream: dict[str, Sequence[str]],
        on_refusal: Literal["raise", "skip"],
        refusals: list[StoreRefusal] | None,
        before_commit: Callable[[list[StoreRefusal]], None] | None = None,
    ) -> list[AppendOutcome]:
        outcomes: list[AppendOutcome] = []
        refused: list[StoreRefusal] = []
        with self.engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("SELECT 1")  # open the transaction before reading the tail
            last = conn.execute(
                select(artifacts.c.seq, artifacts.c.row_sha256)
                .order_by(artifacts.c.seq.desc())
                .limit(1)
            ).first()
            seq, prev = (last.seq, last.row_sha256) if last else (0, GENESIS)
            pending: dict[tuple[str, str], Envelope] = {}
            for item in items:
                try:
                    prepared, ups = self._prepare(
                        conn, item, upstream.get(item.artifact_id, ()), pending
                    )
                except StoreRefusal as refusal:
                    if on_refusal == "raise":
                        raise
                    refused.append(refusal)
                    if refusals is not None:
                        refusals.append(refusal)
                    continue
                key = (prepared.store_kind, prepared.artifact_id)
                latest = pending.get(key) or self._latest(conn, *key)
                if latest is not None and latest.content_hash() == prepared.content_hash():
                    outcomes.append(
                        AppendOutcome(
                            prepared.artifact_id, prepared.store_kind, "unchanged", None, latest
                        )
                    )
                    continue
                up_sha = self._upstream_hash(conn, ups, pending)
                body = prepared.canonical()
                content_sha = sha256_hex(body)
                written_at = datetime.now(UTC).isoformat()
                seq += 1
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
                        row_mac=row_mac(self.signing_key, rh),
                    )
                )
                prev = rh
                pending[key] = prepared
                outcomes.append(
                    AppendOutcome(
                        prepared.artifact_id, prepared.store_kind, "stored", seq, prepared
                    )
                )
            if any(o.status == "stored" for o in outcomes):
                self._seal_head(conn, seq, prev)
            if before_commit is not None:
                before_commit(refused)
        return outcomes

    def _anchor(self, outcomes: list[AppendOutcome]) -> None:
        """Record the committed head outside the database (see `store.anchor`)."""
        if not any(o.status == "stored" for o in outcomes):
            return
        with self.engine.connect() as conn:
            head = conn.execute(select(chain_head).where(chain_head.c.id == 1)).first()
        if head is not None:
            advance_anchor(self.url, self.signing_key, head.seq, head.row_sha256)

    def _seal_head(self, conn: Any, seq: int, last_row_sha256: str) -> None:
        values = {
            "seq": seq,
            "row_sha256": last_row_sha256,
            "mac": head_mac(self.signing_key, seq, last_row_sha256),
        }
        updated = conn.execute(chain_head.update().where(chain_head.c.id == 1).values(**values))
        if updated.rowcount == 0:
            conn.execute(chain_head.insert().values(id=1, **values))

    def _prepare(
        self,
        conn: Any,
        item: Envelope,
        explicit_upstream: Sequence[str],
        pending: dict[tuple[str, str], Envelope],
    ) -> tuple[Envelope, tuple[str, ...]]:
        kind, aid = item.store_kind, item.artifact_id
        if kind not in ENVELOPES_BY_KIND:
            raise StoreRefusal(kind or type(item).__name__, aid, "not a storable envelope kind")
        _check_storable(item)
        if isinstance(item, FeedbackEntry):
            item = self._check_feedback(conn, item, pending)
        elif isinstance(item, PreferenceEntry):  # signed like feedback; any annotator may judge
            if item.signature is None:
                item = sign_entry(item, self.signing_key)  # type: ignore[arg-type]
            elif not signature_valid(item, self.signing_key):  # type: ignore[arg-type]
                raise StoreRefusal(kind, aid, "signature does not verify with the store's key")
        latest = pending.get((kind, aid)) or self._latest(conn, kind, aid)
        if latest is not None and latest.content_hash() != item.content_hash():
            if kind in IMMUTABLE_KINDS:
                raise StoreRefusal(
                    kind,
                    aid,
                    "already stored with different content; stored entries are immutable "
                    "(write a new entry that supersedes it)",
                )
            self._check_new_version(kind, aid, latest, item)
        ups = tuple(dict.fromkeys([*upstream_ids_of(item), *explicit_upstream]))
        for up in ups:
            if not self._exists_any(conn, up, pending):
                raise StoreRefusal(kind, aid, f"upstream artifact {up!r} is not in the store")
        return item, ups

    def _check_feedback(
        self, conn: Any, entry: FeedbackEntry, pending: dict[tuple[str, str], Envelope]
    ) -> FeedbackEntry:
        kind, aid = entry.store_kind, entry.id
        allowed = self.authorised_overriders
        if allowed is None:
            raise StoreRefusal(
                kind,
                aid,
                "no authorised-overrider list is configured (CONTEXTOS_OVERRIDERS_FILE or "
                ".contextos/authorised_overriders.json, a JSON list of operator ids)",
            )
        if entry.signed_by not in allowed:
            raise StoreRefusal(
                kind, aid, f"signer {entry.signed_by!r} is not in the authorised-overrider list"
            )
        record = pending.get(("decision_record", entry.decision_record_id)) or self._latest(
            conn, "decision_record", entry.decision_record_id
        )
        if record is None:
            raise StoreRefusal(
                kind,
                aid,
                f"trace_id {entry.trace_id!r} does not resolve: decision record "
                f"{entry.decision_record_id!r} is not stored",
            )
        assert isinstance(record, DecisionRecord)
        if record.trace_id != entry.trace_id:
            raise StoreRefusal(
                kind,
                aid,
                f"trace_id {entry.trace_id!r} does not match decision record "
                f"{record.record_id} (trace {record.trace_id!r})",
            )
        if entry.supersedes is not None and not (
            pending.get((kind, entry.supersedes)) or self._latest(conn, kind, entry.supersedes)
        ):
            raise StoreRefusal(kind, aid, f"supersedes {entry.supersedes!r}, which is not stored")
        if entry.signature is None:
            return sign_entry(entry, self.signing_key)
        if not signature_valid(entry, self.signing_key):
            raise StoreRefusal(kind, aid, "signature does not verify with the store's key")
        return entry

    @staticmethod
    def _check_new_version(kind: str, aid: str, old: Envelope, new: Envelope) -> None:
        if kind in STATUS_MOVES:
            before, after = str(old.status), str(new.status)
            if before == after or after not in STATUS_MOVES[kind].get(before, frozenset()):
                raise StoreRefusal(kind, aid, f"a {kind} may not move from {before} to {after}")
            b, a = old.model_dump(mode="json"), new.model_dump(mode="json")
            changed = sorted(
                f
                for f in b.keys() | a.keys()
                if f not in MUTABLE_AFTER_REVIEW and b.get(f) != a.get(f)
            )
            if changed:
                raise StoreRefusal(kind, aid, f"{', '.join(changed)} may not change with status")
            return
        old_status, new_status = getattr(old, "status", None), getattr(new, "status", None)
        old_hist = tuple(getattr(old, "history", ()))
        new_hist = tuple(getattr(new, "history", ()))
        if new_hist[: len(old_hist)] != old_hist:
            raise StoreRefusal(kind, aid, "a new version may not rewrite its lifecycle history")
        state = old_status
        for move in new_hist[len(old_hist) :]:
            if move.from_status != state:
                raise StoreRefusal(kind, aid, f"history jumps from {state} to {move.from_status}")
            try:
                check_transition(
                    state, move.to_status, approver_id=move.approver_id, rationale=move.rationale
                )
            except ValueError as exc:
                raise StoreRefusal(kind, aid, str(exc)) from exc
            state = move.to_status
        if state != new_status:
            raise StoreRefusal(
                kind,
                aid,
                f"status {old_status} → {new_status} without a recorded lifecycle transition",
            )
        if old_status is not None and str(old_status) not in UNREVIEWED:
            before, after = old.model_dump(mode="json"), new.model_dump(mode="json")
            changed = sorted(
                f
                for f in before.keys() | after.keys()
                if f not in MUTABLE_AFTER_REVIEW and before.get(f) != after.get(f)
            )
            if changed:
                raise StoreRefusal(
                    kind,
                    aid,
                    f"{', '.join(changed)} changed after review (status {old_status}); a "
                    "reviewed artifact's substance is frozen: propose a new one",
                )

    # -- reading -------------------------------------------------------------------------
    def _latest(self, conn: Any, kind: str, artifact_id: str) -> Envelope | None:
        row = conn.execute(
            select(artifacts.c.body)
            .where(artifacts.c.kind == kind, artifacts.c.artifact_id == artifact_id)
            .order_by(artifacts.c.seq.desc())
            .limit(1)
        ).first()
        return ENVELOPES_BY_KIND[kind].model_validate_json(row.body) if row else None

    def _exists_any(
        self, conn: Any, artifact_id: str, pending: dict[tuple[str, str], Envelope]
    ) -> bool:
        if any(aid == artifact_id for _, aid in pending):
            return True
        row = conn.execute(
            select(artifacts.c.seq).where(artifacts.c.artifact_id == artifact_id).limit(1)
        ).first()
        return row is not None

    def _upstream_hash(
        self, conn: Any, ups: Sequence[str], pending: dict[tuple[str, str], Envelope]
    ) -> str | None:
        if not ups:
            return None
        hashes = []
        for up in ups:
            hit = next((e for (_, aid), e in pending.items() if aid == up), None)
            if hit is not None:
                hashes.append(hit.content_hash())
                continue
            row = conn.execute(
                select(artifacts.c.content_sha256)
                .where(artifacts.c.artifact_id == up)
                .order_by(artifacts.c.seq.desc())
                .limit(1)
            ).first()
            hashes.append(row.content_sha256)
        return sha256_hex(canonical_json(hashes))

    def get(self, model: type[E] | str, artifact_id: str) -> E | None:
        """Latest version of an artifact; `model` is the class, its name or its store kind."""
        with self.engine.connect() as conn:
            found = self._latest(conn, envelope_class(model).store_kind, artifact_id)
        return found  # type: ignore[return-value]

    def find(self, artifact_id: str) -> Envelope | None:
        """Latest version of an artifact by id alone, whatever its kind."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(artifacts.c.kind, artifacts.c.body)
                .where(artifacts.c.artifact_id == artifact_id)
                .order_by(artifacts.c.seq.desc())
                .limit(1)
            ).first()
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
            row = conn.execute(
                select(artifacts.c.upstream_ids)
                .where(artifacts.c.artifact_id == artifact_id)
                .order_by(artifacts.c.seq.desc())
                .limit(1)
            ).first()
        return tuple(json.loads(row.upstream_ids)) if row else ()

    def list(self, model: type[E] | str, since: datetime | None = None) -> EnvelopeList[E]:
        """Latest version of every artifact of a kind (class, class name or store kind), in
        first-written order."""
        model = envelope_class(model)  # type: ignore[assignment]
        latest: dict[str, E] = {}
        for row in self.rows(kind=model.store_kind):
            latest[row.artifact_id] = model.model_validate_json(row.body)
        items = list(latest.values())
        if since is not None:
            items = [i for i in items if _artifact_time(i) is None or _artifact_time(i) >= since]
        return EnvelopeList(items, model)

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


def _check_storable(item: Envelope) -> None:
    """Refuse what cannot be stored as it is: a non-finite number (stored as `Infinity`, which
    is not JSON, or as null), a lone surrogate (not UTF-8) or nesting the readers refuse."""
    try:
        json.dumps(item.model_dump(mode="json"), allow_nan=False).encode("utf-8")
        ENVELOPES_BY_KIND[item.store_kind].model_validate_json(item.canonical())
    except (ValueError, UnicodeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:200]
        raise StoreRefusal(
            item.store_kind, item.artifact_id, f"not storable as is: {reason}"
        ) from None


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


def _create_tables(engine: Engine) -> None:
    """Create the tables if absent. Several processes opening a new store at once race
    between "does it exist" and "create it": the loser sees "already exists" (SQLite) or a
    unique violation on the catalogue (PostgreSQL) and simply checks again."""
    for attempt in range(10):
        try:
            metadata.create_all(engine)
            return
        except (OperationalError, IntegrityError, ProgrammingError) as exc:
            text = str(exc).lower()
            if attempt == 9 or not (
                "already exists" in text or "locked" in text or "duplicate" in text
            ):
                raise
            time.sleep(0.05 * (attempt + 1))


def _make_engine(url: str, *, create: bool) -> Engine:
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
