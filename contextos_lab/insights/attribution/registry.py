"""Attributors by name, so a notebook parameter or a user's plug-in picks one.

`default` is the linear attributor with the bundled weights (`default_weights`), fitted by
logistic regression on the Who&When Algorithm-Generated runs; what that fitting procedure scores
on runs it did not see is measured by `benchmarks/failure_attribution.py` (cross-validated).
`llm-judge` asks an OpenAI-compatible chat endpoint named by the environment (see `judge`).
Register a judge or a rule of your own with `register(name, factory)` (a taken name is refused
unless `replace=True`), install one as a plug-in under the entry-point group
`contextos_lab.attributors`, or name it as `package.module:factory` wherever an attributor is
chosen (`cluster --attributor`, notebook 01's `attributor` parameter); see `contextos_lab.plugins`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from contextos_lab.insights.attribution.default_weights import DEFAULT_TEMPERATURE, DEFAULT_WEIGHTS
from contextos_lab.insights.attribution.linear import LastActorBeforeErrorRule, LinearAttributor
from contextos_lab.insights.attribution.protocol import Attributor
from contextos_lab.plugins import Registry

#: A weights file (`contextos-lab attribution calibrate --out`) that replaces the bundled
#: weights of `default`; set by `cluster --attribution-weights`, inherited by worker processes
#: and notebook kernels alike.
WEIGHTS_ENV = "CONTEXTOS_ATTRIBUTION_WEIGHTS"


def calibrated_attributor(path: str | Path) -> LinearAttributor:
    """The linear attributor with a calibrated weights file (`attribution calibrate --out`),
    named `calibrated (<absolute path>)` wherever it is used (`score --weights`, `cluster
    --attribution-weights`), so a report says which file scored it."""
    from contextos_lab.insights.attribution.weights_file import read_weights

    calibrated = read_weights(path)
    name = f"calibrated ({os.path.abspath(path)})"
    return LinearAttributor(calibrated.weights, name=name, temperature=calibrated.temperature)


def default_attributor() -> Attributor:
    """The linear attributor with the calibrated weights named by WEIGHTS_ENV, else the
    bundled ones."""
    path = os.environ.get(WEIGHTS_ENV, "").strip()
    if path:
        return calibrated_attributor(path)
    return LinearAttributor(DEFAULT_WEIGHTS, name="default", temperature=DEFAULT_TEMPERATURE)


def _llm_judge() -> Attributor:
    from contextos_lab.insights.attribution.judge import judge_from_env

    return judge_from_env(ranker=default_attributor())


#: Entry-point group an installed plug-in declares its attributors under.
GROUP = "contextos_lab.attributors"

ATTRIBUTORS: Registry[Attributor] = Registry(
    "attributor",
    GROUP,
    lambda obj: isinstance(obj, Attributor),
    {
        "default": default_attributor,
        "last-actor-before-error": LastActorBeforeErrorRule,
        "llm-judge": _llm_judge,
    },
)


def register(name: str, factory: Callable[[], Attributor], *, replace: bool = False) -> None:
    """Add an attributor under `name`; a taken name raises `DuplicateName` unless `replace`."""
    ATTRIBUTORS.register(name, factory, replace=replace)


def get_attributor(name: str = "default") -> Attributor:
    """The attributor `name` names: registered, installed plug-in, or `module:factory`."""
    return ATTRIBUTORS.get(name)


__all__ = [
    "ATTRIBUTORS",
    "GROUP",
    "WEIGHTS_ENV",
    "default_attributor",
    "get_attributor",
    "register",
]
