"""`store verify`: recompute every hash, link, MAC and signature; name what was tampered with.

Each failure is a `VerifyReport` with a `verdict` (a stable name a script can match) and the
first row concerned. Nothing stored, however malformed (bad JSON in a column, a NULL, a
missing table, a file that is no longer a database), makes verification raise: a store that
cannot be read is itself a verdict. Only a missing key is an error (nothing can be vouched
for without it), except on a store that holds nothing and never did (no row, no seal, no
project binding, no anchor): that one is `ok` with verdict `empty`, key or no key.
The chain head is checked against the anchor kept beside the key
(`store.anchor`), which catches deleted rows and a rollback to an earlier sealed copy.
Rows are read as stored (`store.raw_rows`: sqlite3 for a SQLite file) and the envelopes load
only once there is a row to check, so verifying an empty store loads neither SQLAlchemy nor
pydantic (issue 40).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.canonical import canonical_json, sha256_hex
from contextos_lab.store.anchor import Anchor, anchor_mac, anchor_path, read_anchor, store_identity
from contextos_lab.store.binding_read import check_binding_rows
from contextos_lab.store.chain import GENESIS, head_mac, row_hash, row_mac
from contextos_lab.store.raw_rows import (
    ARTIFACT_COLUMNS,
    CHAIN_HEAD_COLUMNS,
    RawReader,
    Unreadable,
    raw_reader,
    select_sql,
)
from contextos_lab.store.records import VerifyReport

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from contextos_lab.store.handle import StoreHandle

#: Every column but the sequence number and the optional upstream hash holds text.
_TEXT_COLUMNS = tuple(c for c in ARTIFACT_COLUMNS if c not in ("seq", "upstream_sha256"))


class _Tampered(ContextosError):
    def __init__(self, verdict: str, reason: str) -> None:
        self.verdict, self.reason = verdict, reason
        self.checked, self.seq, self.aid = 0, None, None

    def at(self, checked: int, seq: Any = None, aid: Any = None) -> _Tampered:
        """Where the chain walk was: rows checked before it, and the row concerned."""
        self.checked, self.seq, self.aid = checked, seq, aid
        return self


def verify_store(store: StoreHandle) -> VerifyReport:
    """`verify_url` of an open store, with its key and engine."""
    return verify_url(store.url, lambda: store.signing_key, store.engine)


def verify_url(
    url: str, signing_key: Callable[[], bytes], engine: Engine | None = None
) -> VerifyReport:
    """Verify the store at `url` from its raw rows (sqlite3 for a SQLite file, see
    `store.raw_rows`). `signing_key()` is asked only when there is something to vouch for;
    a missing SQLite file is `FileNotFoundError`."""
    try:
        with raw_reader(url, engine) as reader:  # first: a URL it cannot open is an error
            anchor = read_anchor(url)
            if anchor is None and _holds_nothing(reader):
                return VerifyReport(True, 0, verdict="empty")
            key = signing_key()  # SigningKeyMissing propagates: an error, not a verdict
            checked, last, heads = _check_chain(url, anchor, reader, key)
    except _Tampered as t:
        return _bad(t.verdict, t.reason, t.checked, t.seq, t.aid)
    except Unreadable as exc:  # a server that does not answer
        return _bad("unreadable_database", f"the database cannot be read: {exc}", 0)
    try:
        _check_head(heads, key, *last)
        warnings = _check_anchor(url, anchor, key, *last)
    except _Tampered as t:
        return _bad(t.verdict, t.reason, checked)
    return VerifyReport(True, checked, warnings=warnings)


def _check_chain(
    url: str, anchor: Anchor | str | None, reader: RawReader, key: bytes
) -> tuple[int, tuple[int, str], list[Any]]:
    """(rows checked, (last seq, last row hash), chain head rows); `_Tampered` at the first
    problem, carrying how far it got."""
    checked, last = 0, (0, GENESIS)
    seq, aid = None, None
    try:
        tables = reader.tables()
        for table in ("artifacts", "chain_head"):
            if table not in tables:
                raise _Tampered("missing_table", f"table {table} is missing")
        latest: dict[str, str] = {}
        for raw in reader.rows(select_sql("artifacts", ARTIFACT_COLUMNS)):
            seq, aid = raw.seq, raw.artifact_id
            try:
                _check_row(raw, checked + 1, last[1], key, latest)
                _check_anchored_row(url, anchor, raw)
            except _Tampered as t:
                raise t.at(checked, seq, aid) from None
            latest[raw.artifact_id] = raw.content_sha256
            last = (raw.seq, raw.row_sha256)
            checked += 1
        heads = list(reader.rows(select_sql("chain_head", CHAIN_HEAD_COLUMNS, "id")))
        altered = check_binding_rows(reader, key)
    except Unreadable as exc:
        reason = f"the database cannot be read: {exc}"
        raise _Tampered("unreadable_database", reason).at(
            checked, seq if checked else None, aid
        ) from None
    if altered is not None:
        raise _Tampered("malformed_row", altered).at(checked)
    return checked, last, heads


def _holds_nothing(reader: RawReader) -> bool:
    """Both tables there and no row in them nor in the project binding: nothing to vouch for.
    (Anything unreadable is not "nothing": the full check names it.)"""
    try:
        tables = reader.tables()
        if not {"artifacts", "chain_head"} <= tables:
            return False
        counted = ["artifacts", "chain_head", *({"project_binding"} & tables)]
        return all(next(reader.rows(f"SELECT count(*) AS n FROM {t}"))[0] == 0 for t in counted)
    except Unreadable:
        return False


def _check_anchored_row(url: str, anchor: Anchor | str | None, raw: Any) -> None:
    if isinstance(anchor, Anchor) and raw.seq == anchor.seq and raw.row_sha256 != anchor.row_sha256:
        raise _Tampered(
            "chain_replaced",
            f"row {anchor.seq} is not the row the anchor {anchor_path(url)} records: "
            "the chain was rewritten",
        )


def _bad(verdict: str, reason: str, checked: int, seq: Any = None, aid: Any = None) -> VerifyReport:
    return VerifyReport(
        False,
        checked,
        seq if isinstance(seq, int) else None,
        str(aid) if aid is not None else None,
        reason,
        verdict=verdict,
    )


def _check_row(raw: Any, expected: int, prev: str, key: bytes, latest: dict[str, str]) -> None:
    if not isinstance(raw.seq, int) or any(
        not isinstance(getattr(raw, c), str) for c in _TEXT_COLUMNS
    ):
        raise _Tampered("malformed_row", "a column is NULL or of the wrong type")
    if raw.upstream_sha256 is not None and not isinstance(raw.upstream_sha256, str):
        raise _Tampered("malformed_row", "upstream_sha256 is of the wrong type")
    try:
        ups = json.loads(raw.upstream_ids)
    except ValueError:
        raise _Tampered("malformed_row", "upstream_ids is not JSON") from None
    if not isinstance(ups, list) or not all(isinstance(u, str) for u in ups):
        raise _Tampered("malformed_row", "upstream_ids is not a JSON list of ids")
    if raw.seq != expected:
        raise _Tampered(
            "sequence_gap",
            f"sequence gap: expected seq {expected}, found {raw.seq} (a row was removed)",
        )
    if raw.prev_row_sha256 != prev:
        raise _Tampered("chain_broken", "prior-row hash does not match the chain")
    if sha256_hex(raw.body.encode("utf-8", "surrogateescape")) != raw.content_sha256:
        raise _Tampered("body_altered", "content does not match its SHA-256 (body altered)")
    expected_hash = row_hash(
        raw.seq,
        raw.kind,
        raw.artifact_id,
        raw.content_sha256,
        raw.prev_row_sha256,
        ups,
        raw.upstream_sha256,
        raw.written_at,
    )
    if expected_hash != raw.row_sha256:
        raise _Tampered(
            "metadata_altered", "row hash does not match its columns (metadata altered)"
        )
    if not hmac.compare_digest(raw.row_mac, row_mac(key, raw.row_sha256)):
        raise _Tampered(
            "row_mac_invalid",
            "row MAC does not verify with the store key (chain rewritten or re-signed)",
        )
    _check_body(raw)
    if ups:
        expected_up = sha256_hex(canonical_json([latest.get(u, "") for u in ups]))
        if expected_up != raw.upstream_sha256:
            raise _Tampered("upstream_mismatch", "upstream hash does not match earlier rows")
    if raw.kind == "feedback_entry" and not _feedback_signature_valid(raw.body, key):
        raise _Tampered("signature_invalid", "feedback signature does not verify")


def _feedback_signature_valid(body: str, key: bytes) -> bool:
    from contextos_lab.schemas.feedback import FeedbackEntry  # envelopes only for rows to check
    from contextos_lab.store.signing import signature_valid

    return signature_valid(FeedbackEntry.model_validate_json(body), key)


def _reject(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _check_body(raw: Any) -> None:
    try:
        parsed = json.loads(raw.body, parse_constant=_reject)
    except (ValueError, RecursionError) as exc:
        raise _Tampered("malformed_body", f"body is not JSON: {exc}") from None
    if canonical_json(parsed) != raw.body:
        raise _Tampered("malformed_body", "body is not in canonical form")
    from contextos_lab.schemas.envelopes import ENVELOPES_BY_KIND  # only for a row to check

    model = ENVELOPES_BY_KIND.get(raw.kind)
    if model is None:
        raise _Tampered("malformed_body", f"unknown kind {raw.kind!r}")
    try:
        envelope = model.model_validate(parsed)
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:200]
        raise _Tampered("malformed_body", f"body no longer validates: {reason}") from None
    if envelope.artifact_id != raw.artifact_id:
        raise _Tampered("metadata_altered", "artifact id column differs from the body's id")


def _check_head(heads: Sequence[Any], key: bytes, last_seq: int, last_hash: str) -> None:
    if not heads:
        if last_seq:
            raise _Tampered("head_missing", "chain head seal is missing")
        return
    if len(heads) > 1:
        raise _Tampered("malformed_row", "more than one chain head seal")
    head = heads[0]
    if not (
        isinstance(head.seq, int) and isinstance(head.row_sha256, str) and isinstance(head.mac, str)
    ):
        raise _Tampered("malformed_row", "chain head seal has a NULL or wrongly typed column")
    if not hmac.compare_digest(head.mac, head_mac(key, head.seq, head.row_sha256)):
        raise _Tampered("head_seal_invalid", "chain head seal does not verify with the store key")
    if (head.seq, head.row_sha256) != (last_seq, last_hash):
        raise _Tampered(
            "rows_removed",
            f"chain head seal names seq {head.seq} but the chain ends at seq {last_seq}: "
            "rows were removed from the end",
        )


def _check_anchor(
    url: str, anchor: Anchor | str | None, key: bytes, last_seq: int, last_hash: str
) -> list[str]:
    where = anchor_path(url)
    if anchor is None:
        if not last_seq:
            return []
        return [
            f"no anchor at {where}: a rollback to an earlier copy of this store cannot be "
            "detected (the anchor is written by every append made with this key)"
        ]
    if isinstance(anchor, str):
        raise _Tampered("anchor_unreadable", anchor)
    if anchor.store != store_identity(url) or not hmac.compare_digest(
        anchor.mac, anchor_mac(key, anchor.store, anchor.seq, anchor.row_sha256)
    ):
        raise _Tampered("anchor_invalid", f"anchor {where} does not verify with the store key")
    if last_seq < anchor.seq:
        if last_seq == 0:
            raise _Tampered(
                "rows_deleted", f"the store holds no rows; its anchor {where} records {anchor.seq}"
            )
        raise _Tampered(
            "rolled_back",
            f"the chain ends at seq {last_seq} but its anchor {where} records seq {anchor.seq}: "
            "rows were removed or an earlier copy was restored",
        )
    if last_seq > anchor.seq:
        return [f"{last_seq - anchor.seq} rows after the anchored head (seq {anchor.seq})"]
    return []
