"""Policy bundles: versioned, hashed rule sets, their on-disk registry, and intent rubrics
replayed like policy.
"""

from pathlib import Path

#: Where the bundle registry lives unless `--bundles` says otherwise (here, not in `registry`,
#: so a command's `--help` can show it without loading pydantic models)
DEFAULT_BUNDLES_DIR = Path(".contextos/bundles")

__all__ = [
    "bundle",
    "registry",
    "rubric",
]
