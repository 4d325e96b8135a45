"""The store's signing key: `CONTEXTOS_SIGNING_KEY`, else the key file (never in the code).

Apart from `store.signing` (which signs envelopes) so that a command that only needs the key
(`store verify`, a store's project binding) loads no envelope (issue 40).
"""

from __future__ import annotations

import os

from contextos_lab.errors import ContextosError
from contextos_lab.store.locations import default_key_file


class SigningKeyMissing(ContextosError, RuntimeError):
    pass


def load_signing_key(required: bool = True) -> bytes | None:
    """The key from `CONTEXTOS_SIGNING_KEY`, else from `CONTEXTOS_SIGNING_KEY_FILE` (default
    `signing.key` in the configuration folder); None, or `SigningKeyMissing`, when neither."""
    value = os.environ.get("CONTEXTOS_SIGNING_KEY")
    if value:
        return value.encode("utf-8")
    path = default_key_file()
    if path.is_file():
        key = path.read_bytes().strip()
        if key:
            return key
    if required:
        raise SigningKeyMissing(
            "no feedback signing key: set CONTEXTOS_SIGNING_KEY or put a key in "
            f"{path} (e.g. `python -c 'import secrets;print(secrets.token_hex(32))' > {path}`)"
        )
    return None


def require_signing_key() -> bytes:
    """The key, or `SigningKeyMissing` naming where to put one."""
    key = load_signing_key(required=True)
    assert key is not None  # required=True raises instead
    return key
