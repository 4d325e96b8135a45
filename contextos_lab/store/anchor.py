"""The chain head anchored outside the database, so rollback and deletion are caught.

The in-database `chain_head` seal catches rows cut off the end, but not a database restored
from an earlier copy (its older seal is valid) nor one whose rows were all deleted together
with the seal. After every commit the writer records the chain's last (seq, row hash) in
`ANCHOR_DIR/<store id>.json`, MACed with the store key; `verify` then requires that the chain
still holds that row. Rows written after the anchor (a writer that crashed between commit and
anchor) are accepted: their row MACs still need the key. The anchor only moves forward: it is
rewritten under a file lock and only with a longer chain.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from contextos_lab.store.locations import anchor_dir


@dataclass(frozen=True)
class Anchor:
    store: str
    seq: int
    row_sha256: str
    mac: str


def store_identity(url: str) -> str:
    """A SQLite file's absolute path, else the URL without its password."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            return f"sqlite:{Path(path).resolve()}"
        return "sqlite:memory"
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ValueError, TypeError):  # an odd URL is still an identity
        return url


def anchor_path(url: str) -> Path:
    digest = hashlib.sha256(store_identity(url).encode("utf-8")).hexdigest()[:24]
    return anchor_dir() / f"{digest}.json"


def anchor_mac(key: bytes, store: str, seq: int, row_sha256: str) -> str:
    message = f"anchor:{store}:{seq}:{row_sha256}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def read_anchor(url: str) -> Anchor | str | None:
    """The anchor, None when there is none, or why it cannot be read."""
    path = anchor_path(url)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Anchor(
            str(data["store"]), int(data["seq"]), str(data["row_sha256"]), str(data["mac"])
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"anchor file {path} is unreadable: {exc}"


def advance_anchor(url: str, key: bytes, seq: int, row_sha256: str) -> None:
    """Record (seq, row hash) as the chain head unless the anchor already names a later row."""
    if store_identity(url) == "sqlite:memory":
        return
    path = anchor_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = read_anchor(url)
        if isinstance(current, Anchor) and current.seq >= seq:
            return
        store = store_identity(url)
        body = {
            "store": store,
            "seq": seq,
            "row_sha256": row_sha256,
            "mac": anchor_mac(key, store, seq, row_sha256),
        }
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(body, fh)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def retire_anchor(url: str) -> Path | None:
    """Move the anchor of a store deleted on purpose aside (kept, renamed), or return None.

    Only for a caller that is creating a new store where an old one was removed by the user
    (e.g. `demo` into a fresh folder): the old anchor would otherwise flag the new chain as a
    rewrite of the old. The anchor is renamed, never deleted, so the old head stays on record.
    """
    path = anchor_path(url)
    if not path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    retired = path.with_name(f"{path.stem}.retired-{stamp}.json")
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.replace(path, retired)
    return retired
