"""A held-out set's error budget as a run spec declares it (LORD++ settings; seed 001's gate).

The schema only: the gate (`gate.heldout.error_budget`) spends it; the spec, a layer below, carries
it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ErrorBudget(BaseModel):
    """How a held-out set's false-promotion budget is spent across gates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["lord++"] = "lord++"
    #: Target error over the set's life (FWER under no true effect ≤ initial wealth ≤ alpha).
    alpha: float = Field(default=0.05, gt=0, lt=1)
    #: Share of alpha held as initial wealth (the rest is the first promotion's reward).
    initial_wealth_share: float = Field(default=0.9, gt=0, lt=1)
    #: Planned number of gates on one held-out set; the no-promotion level is about
    #: initial_wealth / horizon and the set is spent after `horizon` gates without promotions
    #: (promotions earn budget back). 50 ≈ a year of weekly sweeps; benchmarks/heldout_reuse.py
    #: shows the trade (a longer horizon keeps a set longer at a lower level per gate).
    horizon: int = Field(default=50, ge=1, le=1_000_000)
    #: A level below this is not worth a held-out read: the set is spent, refresh it.
    min_level: float = Field(default=1e-6, ge=0)

    @property
    def initial_wealth(self) -> float:
        return self.alpha * self.initial_wealth_share

    @model_validator(mode="after")
    def _reachable(self) -> ErrorBudget:
        if self.min_level >= self.initial_wealth / self.horizon:
            raise ValueError(
                f"min_level {self.min_level} is not below the first gate's level "
                f"{self.initial_wealth / self.horizon:.3g}: every gate would be refused"
            )
        return self
