"""Attributors by name, so a notebook parameter or a user's plug-in picks one.

`default` is the linear attributor with the bundled weights (`default_weights`), fitted by
logistic regression on the Who&When Algorithm-Generated runs; what that fitting procedure scores
on runs it did not see is measured by `benchmarks/failure_attribution.py` (cross-validated).
Register an LLM judge or a rule of your own with `register(name, factory)`.
"""

from __future__ import annotations

from collections.abc import Callable

from contextos_lab.insights.attribution.default_weights import DEFAULT_WEIGHTS
from contextos_lab.insights.attribution.linear import LastActorBeforeErrorRule, LinearAttributor
from contextos_lab.insights.attribution.protocol import Attributor

ATTRIBUTORS: dict[str, Callable[[], Attributor]] = {
    "default": lambda: LinearAttributor(DEFAULT_WEIGHTS, name="default"),
    "last-actor-before-error": LastActorBeforeErrorRule,
}


def register(name: str, factory: Callable[[], Attributor]) -> None:
    ATTRIBUTORS[name] = factory


def get_attributor(name: str = "default") -> Attributor:
    if name not in ATTRIBUTORS:
        raise KeyError(f"unknown attributor {name!r} (known: {', '.join(sorted(ATTRIBUTORS))})")
    return ATTRIBUTORS[name]()


__all__ = ["ATTRIBUTORS", "get_attributor", "register"]
