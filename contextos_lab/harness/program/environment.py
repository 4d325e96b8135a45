"""What environment a program harness runs in, and what of it keys the result cache.

`env` in `harness_kwargs` is merged over the kit's own environment (PATH, HOME and API keys
stay visible); `env_clear: true` starts from nothing instead, for a harness that must be
isolated. Only the *declared* part (the spec's `env` and `env_clear`) keys the cache, never the
kit's environment: a new shell or a rotated API key must not invalidate paid results, while a
changed `MODEL=` in the spec must.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from contextos_lab.schemas.base import canonical_json, sha256_hex


def effective_env(declared: Mapping[str, str] | None, env_clear: bool) -> dict[str, str] | None:
    """The environment the program gets (None: the kit's own, unchanged)."""
    extra = {str(k): str(v) for k, v in (declared or {}).items()}
    if env_clear:
        return extra
    if not extra:
        return None
    return {**os.environ, **extra}


def command_digest(argv: Sequence[str], declared: Mapping[str, str] | None, env_clear: bool) -> str:
    """A short hash of the command and its declared environment (a cache-key component)."""
    declared_env = {str(k): str(v) for k, v in sorted((declared or {}).items())}
    payload = {"argv": [str(a) for a in argv], "env": declared_env, "env_clear": env_clear}
    return sha256_hex(canonical_json(payload))[:16]
