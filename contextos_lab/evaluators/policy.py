"""Policy: did the decision comply with the domain's true rules (not the harness config's)?

The rules are the project's `policy_evaluation` table (`contextos-project.yaml`): per case
intent, a boolean expression over the case's facts and numeric fields under which approving is
a violation. A case scores 0 when the run approved where its intent's expression holds;
escalating or denying is always compliant. A case whose intent has no expression is **not
scored** (NaN): nothing says what would violate policy there, and a silent 1.0 would let any
decision pass. Means and floors are over the scored cases (`harness.repeat_scores`), the gate
leaves unscored cases out of the policy test and names their intents (`gate.verdict`), and
`project --check` / `search` warn about such intents before anything is paid.
The expressions are evaluated by pandas (`DataFrame.eval`, python engine), vectorised over cases.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from contextos_lab.evaluators.frames import aligned, facts_frame
from contextos_lab.schemas.scorecard import EvaluatorName


def _names(expression: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"policy_evaluation expression {expression!r}: {exc.msg}") from None
    return tuple(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}))


class PolicyEvaluator:
    """`rules`: intent -> expression; None reads the active project's `policy_evaluation`."""

    name = EvaluatorName.policy
    direction: Literal["maximize", "minimize"] = "maximize"

    def __init__(self, rules: Mapping[str, str] | None = None) -> None:
        self._rules = dict(rules) if rules is not None else None

    def rules(self) -> dict[str, str]:
        if self._rules is not None:
            return self._rules
        from contextos_lab.domain.active import active_project

        return dict(active_project().policy_evaluation)

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        res = aligned(cases, results)
        rules = self.rules()
        names = tuple(sorted({n for expr in rules.values() for n in _names(expr)}))
        facts = facts_frame(cases, names)
        approve = (res["decision"] == "approve").to_numpy()
        intent = cases["intent"].to_numpy()
        violation = np.zeros(len(cases), dtype=bool)
        for name, expression in rules.items():
            mask = intent == name
            if not mask.any():
                continue
            forbidden = facts.eval(expression, engine="python")
            violation |= mask & np.asarray(forbidden, dtype=bool)
        violation &= approve
        scores = np.where(violation, 0.0, 1.0)
        scores[~np.isin(intent, list(rules))] = np.nan  # no rule: nothing to judge against
        return pd.Series(scores, index=res.index, name=self.name.value)
