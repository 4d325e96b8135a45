"""Insights from runs (seed 001's five kinds): the derived run columns, the run rules, and
the insights they yield.
"""

__all__ = [
    "columns",
    "insights",
    "rules",
]
