"""The core override_reason_class registry: domain-free classes only, read from the JSON beside it.

Apart from `reason_classes` (which merges in the active project's classes) so that loading a
project can check its compilers against the core registry without needing an active project.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

REGISTRY_PATH = Path(__file__).with_name("reason_classes.json")


@lru_cache(maxsize=1)
def core_reason_classes() -> dict[str, dict[str, object]]:
    data = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
    return dict(data["classes"])
