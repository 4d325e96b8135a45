"""Utility: did the run reach the expected decision, with partial credit.

  1.0  the expected decision from the right skill (an escalation expected and made counts);
       for an answer, also citing the case's key evidence
  0.5  a correct answer without the key evidence (generic but not wrong), or an escalation
       where a decision was expected (safe but unhelpful)
  0.0  anything else: a wrong decision, or any non-escalation from the wrong skill
The routed skill is read from the first trace event when the harness reports one.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from contextos_lab.evaluators.frames import aligned
from contextos_lab.schemas.scorecard import EvaluatorName


def _routed_skill(trace: Any) -> str | None:
    if trace is None or len(trace) == 0:
        return None
    first = trace[0]
    return first.get("skill") if isinstance(first, dict) and first.get("event") == "route" else None


class UtilityEvaluator:
    name = EvaluatorName.utility
    direction: Literal["maximize", "minimize"] = "maximize"

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        res = aligned(cases, results)
        decision = res["decision"].to_numpy(dtype=object)
        expected = cases["expected_decision"].to_numpy(dtype=object)
        skill = np.array([_routed_skill(t) for t in res["trace"]], dtype=object)
        exp_skill = cases["expected_skill"].to_numpy(dtype=object)
        wrong_skill = (skill != None) & (skill != exp_skill)  # noqa: E711
        cited = np.array(
            [
                not key or any(k in used for k in key)
                for key, used in zip(cases["key_evidence"], res["evidence_used"], strict=True)
            ],
            dtype=bool,
        )
        escalate = decision == "escalate"
        match = (decision == expected) & ~wrong_skill
        score = np.where(
            escalate,
            np.where(expected == "escalate", 1.0, 0.5),
            np.where(match, np.where(cited, 1.0, 0.5), 0.0),
        )
        return pd.Series(score, index=res.index, name=self.name.value)
