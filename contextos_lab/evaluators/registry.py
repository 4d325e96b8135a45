"""Evaluation functions by name, so a spec's `evaluate:` names one as it names a harness.

A spec says `evaluate: scorecard` (the five evaluators, the default), `evaluate: assertions`
(the simple case format's assertions), an installed plug-in's name (entry-point group
`contextos_lab.evaluators`) or `package.module:function`; the function maps
`(cases, results)` to a frame indexed by case_id with one column per evaluator
(`contextos_lab.testing.EvaluatorContract` checks one). See `contextos_lab.plugins`.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from contextos_lab.plugins import Registry

#: `(cases, results) -> frame indexed by case_id, one column per evaluator`.
EvaluateFn = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]

#: Entry-point group an installed plug-in declares its evaluation functions under.
GROUP = "contextos_lab.evaluators"


def _scorecard() -> EvaluateFn:
    from contextos_lab.evaluators.scorecard import evaluate

    return evaluate


def _assertions() -> EvaluateFn:
    from contextos_lab.evaluators.assertions import evaluate

    return evaluate


EVALUATORS: Registry[EvaluateFn] = Registry(
    "evaluator", GROUP, callable, {"scorecard": _scorecard, "assertions": _assertions}
)


def get_evaluate(ref: str) -> EvaluateFn:
    """The evaluation function `ref` names: registered, installed plug-in or `module:function`."""
    return EVALUATORS.get(ref)


__all__ = ["EVALUATORS", "GROUP", "EvaluateFn", "get_evaluate"]
