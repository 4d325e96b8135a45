"""Policy: did the decision comply with the desk's true rules (not the config's)?

A case scores 0 when the run approved something the policy forbids: a refund that is a repeat
within 30 days, outside the window, without proof, or above the $150 agent limit; a cancellation
of a shipped order; an account change without a passed IDV. Escalating is always compliant.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from contextos_lab.evaluators.frames import aligned, facts_frame
from contextos_lab.harness.reference.knowledge_base import POLICY_APPROVAL_LIMIT
from contextos_lab.schemas.scorecard import EvaluatorName


class PolicyEvaluator:
    name = EvaluatorName.policy
    direction: Literal["maximize", "minimize"] = "maximize"

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        res = aligned(cases, results)
        facts = facts_frame(cases)
        approve = (res["decision"] == "approve").to_numpy()
        intent = cases["intent"].to_numpy()
        amount = cases["amount"].to_numpy(dtype=np.float64)
        bad_refund = (
            facts["repeat_customer"]
            | ~facts["within_window"]
            | ~facts["has_proof"]
            | (amount > POLICY_APPROVAL_LIMIT)
        )
        violation = approve & (
            ((intent == "refund") & bad_refund)
            | ((intent == "cancellation") & facts["shipped"])
            | ((intent == "account_change") & ~facts["idv_passed"])
        )
        return pd.Series(np.where(violation, 0.0, 1.0), index=res.index, name=self.name.value)
