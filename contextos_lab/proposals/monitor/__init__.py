"""After release: the monitor window over production scorecards, source closure, and the
loop's evaluation metrics.
"""

__all__ = [
    "closure",
    "metrics",
    "monitor",
    "windows",
]
