"""The override_reason_class registry (seed 000: a typed enum that grows under change control).

The registry is data (`reason_classes.json` beside this module) so adding a class is a reviewed
data change, not a code change. An unknown class is a validation error that names the registry.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

REGISTRY_PATH = Path(__file__).with_name("reason_classes.json")


@lru_cache(maxsize=1)
def reason_classes() -> dict[str, dict[str, object]]:
    data = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
    return dict(data["classes"])


def check_reason_class(value: str) -> str:
    known = reason_classes()
    if value not in known:
        raise ValueError(
            f"unknown override_reason_class {value!r}: not in the registry "
            f"{REGISTRY_PATH.name} ({REGISTRY_PATH}); known classes: {', '.join(sorted(known))}"
        )
    return value
