"""Latency: the harness's modelled milliseconds per case (reproducible; wall time is not)."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from contextos_lab.evaluators.frames import aligned
from contextos_lab.schemas.scorecard import EvaluatorName


class LatencyEvaluator:
    name = EvaluatorName.latency
    direction: Literal["maximize", "minimize"] = "minimize"

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        res = aligned(cases, results)
        return pd.Series(
            res["latency_ms"].to_numpy(dtype=float), index=res.index, name=self.name.value
        )
