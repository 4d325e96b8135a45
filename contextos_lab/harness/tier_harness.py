"""The screen tier's harness, keyed apart from the target's in the per-case result cache.

The screen is often the target's own harness with other `harness_kwargs` (a smaller model, fewer
tool calls): same name, same version, so the result cache (keyed by name and version,
harness.result_cache) would hand the target's paid answers to the screen and back. The wrapper
adds the tier and a digest of its kwargs to the version; everything else is the harness's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextos_lab.harness.execution import harness_key
from contextos_lab.harness.protocol import Harness
from contextos_lab.schemas.base import canonical_json, sha256_hex


class TierHarness:
    """`harness` answering as tier `tier`: `version` carries the tier and its kwargs' digest."""

    def __init__(self, harness: Harness, tier: str, kwargs: Mapping[str, Any]) -> None:
        self.inner = harness
        self.tier = tier
        self.name = harness.name
        own = harness_key(harness).version
        self.version = f"{own}+tier:{tier}:{sha256_hex(canonical_json(dict(kwargs)))[:12]}"

    def __getattr__(self, name: str) -> Any:
        # run / run_batch / max_concurrency ...: the harness's own (bound methods keep their
        # signatures, which the execution layer inspects for `seed`)
        return getattr(self.inner, name)
