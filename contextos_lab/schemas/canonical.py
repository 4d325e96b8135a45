"""Canonical JSON and its SHA-256: the bytes the experience store hashes, chains and MACs.

Apart from the envelopes (`schemas.base` re-exports both) so that checking a chain from raw
rows (`store verify` of a store with nothing to validate) loads no pydantic (issue 40).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(payload: Any) -> str:
    """Deterministic JSON: sorted keys, compact separators, non-ASCII kept as UTF-8."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
