"""The Evaluator seam: per-case scores over a cases frame and a results frame.

Per-case scores (case_id × evaluator) are what the gate pairs; a Scorecard is their aggregate.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import pandas as pd

from contextos_lab.schemas.scorecard import EvaluatorName


@runtime_checkable
class Evaluator(Protocol):
    name: EvaluatorName
    direction: Literal["maximize", "minimize"]

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        """One float per case, aligned with `cases` (index = cases.case_id)."""
        ...
