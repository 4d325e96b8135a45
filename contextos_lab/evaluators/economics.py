"""Economics: cents per decision, from tokens times a declared price table.

Input tokens are `tokens - tokens_out`; a harness that does not report `tokens_out` is priced
as if every token were input (the cheaper rate: an under-estimate, stated here).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.evaluators.frames import aligned
from contextos_lab.schemas.scorecard import EvaluatorName


class PriceTable(BaseModel):
    """Cents per 1,000 tokens ($2.50 / $10 per million in / out by default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "reference-model"
    cents_per_1k_input: float = Field(default=0.25, ge=0)
    cents_per_1k_output: float = Field(default=1.0, ge=0)


DEFAULT_PRICES = PriceTable()


class EconomicsEvaluator:
    name = EvaluatorName.economics
    direction: Literal["maximize", "minimize"] = "minimize"

    def __init__(self, prices: PriceTable = DEFAULT_PRICES) -> None:
        self.prices = prices

    def score(self, cases: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
        res = aligned(cases, results)
        total = res["tokens"].to_numpy(dtype=np.float64)
        out = (
            res["tokens_out"].fillna(0).to_numpy(dtype=np.float64)
            if "tokens_out" in res
            else np.zeros_like(total)
        )
        cents = (total - out) / 1000 * self.prices.cents_per_1k_input + (
            out / 1000 * self.prices.cents_per_1k_output
        )
        return pd.Series(cents, index=res.index, name=self.name.value)
