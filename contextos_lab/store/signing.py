"""HMAC-SHA256 signing of FeedbackEntry and ReviewVerdict (any envelope with a `signature`),
and who may sign.

The key comes from `CONTEXTOS_SIGNING_KEY`, else from the file named by
`CONTEXTOS_SIGNING_KEY_FILE` (default `signing.key` in the user's configuration folder, see
`store.locations`: never beside the database, whose writer must not hold the key); it is never
in the code.
The signature covers the canonical entry without its `signature` field, so any later change
to any stored byte of the entry breaks it.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Iterable
from hashlib import sha256
from pathlib import Path
from typing import TypeVar

from contextos_lab.schemas.base import Envelope, canonical_json
from contextos_lab.store.signing_key import SigningKeyMissing, load_signing_key

S = TypeVar("S", bound=Envelope)

#: Names this module has always offered (the key alone lives in `store.signing_key`).
__all__ = [
    "SigningKeyMissing",
    "compute_signature",
    "load_authorised_overriders",
    "load_signing_key",
    "overriders",
    "sign_entry",
    "signature_valid",
    "signing_payload",
]

DEFAULT_OVERRIDERS_FILE = Path(".contextos/authorised_overriders.json")


def signing_payload(entry: Envelope) -> str:
    body = entry.model_dump(mode="json")
    body.pop("signature", None)
    return canonical_json(body)


def compute_signature(entry: Envelope, key: bytes) -> str:
    return hmac.new(key, signing_payload(entry).encode("utf-8"), sha256).hexdigest()


def sign_entry(entry: S, key: bytes) -> S:
    return entry.model_copy(update={"signature": compute_signature(entry, key)})


def signature_valid(entry: Envelope, key: bytes) -> bool:
    signature = getattr(entry, "signature", None)
    if signature is None:
        return False
    return hmac.compare_digest(signature, compute_signature(entry, key))


def load_authorised_overriders(path: Path | None = None) -> frozenset[str] | None:
    """The operator ids allowed to sign overrides (and to review and approve), from a JSON list:
    `path`, else `CONTEXTOS_OVERRIDERS_FILE`, else `.contextos/authorised_overriders.json`, else
    the active project's `data/authorised_overriders.json`; None when none is configured."""
    explicit = path is not None or "CONTEXTOS_OVERRIDERS_FILE" in os.environ
    path = path or Path(os.environ.get("CONTEXTOS_OVERRIDERS_FILE", DEFAULT_OVERRIDERS_FILE))
    if not path.is_file() and not explicit:
        path = _project_list() or path  # the project's own list, `data/authorised_overriders.json`
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("authorised_overriders", [])
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ValueError(f"{path}: expected a JSON list of operator ids")
    return frozenset(data)


def _project_list() -> Path | None:
    """The active project's `data/authorised_overriders.json`, when it has one."""
    from contextos_lab.domain.active import active_project
    from contextos_lab.domain.config import ProjectError

    try:
        found = active_project().data_dir / "authorised_overriders.json"
    except ProjectError:
        return None
    return found if found.is_file() else None


def overriders(ids: Iterable[str]) -> frozenset[str]:
    return frozenset(ids)
