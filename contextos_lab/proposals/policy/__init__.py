"""Policy bundles: versioned, hashed rule sets, their on-disk registry, and intent rubrics
replayed like policy.
"""

__all__ = [
    "bundle",
    "registry",
    "rubric",
]
