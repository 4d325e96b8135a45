"""Error control over the life of one held-out set: LORD++ over the sequence of gates.

Each gate (one sweep's candidates, Holm-corrected among themselves) is one test in an online
sequence keyed by the held-out manifest. The level it is tested at comes from LORD++
(Ramdas, Yang, Wainwright & Jordan 2017; Javanmard & Montanari 2018), as implemented by the
maintained `online-fdr` package (parity-tested against Bioconductor's onlineFDR), with one
change of shape: the gamma sequence spreads the budget evenly over a *planned lifetime* of
`horizon` gates instead of the package's default, which front-loads almost all of it on the
first few tests (its level is ~1e-4 by the tenth gate) and suits unbounded streams, not a
held-out set that is meant to be retired and refreshed.

What it guarantees (documented in docs/stages/gate.md, "Held-out reuse"):
- with no true effect in any sweep, the chance of *any* false promotion over the set's whole
  life is at most `initial_wealth` (< alpha), whatever the dependence between gates: before the
  first promotion every level is fixed in advance (`initial_wealth * gamma_t`), so a union bound
  applies;
- with true effects mixed in, the expected share of false promotions among promotions (FDR)
  stays at most alpha (LORD++'s guarantee, for independent p-values), and each promotion earns
  budget back, so a set that keeps finding real improvements stays usable.
A set is *spent* when the next level falls below `min_level`; the gate then refuses to read it
and names the refresh command.

The state is never kept in memory across processes: it is replayed from the ledger's claim and
outcome lines (pure function of the recorded rejections), so separate processes and machines
that share the ledger share the budget.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from online_fdr.core.abstract.abstract_gamma_seq import AbstractGammaSequence
from online_fdr.p_values import LordPlusPlus
from pydantic import BaseModel, ConfigDict

from contextos_lab.schemas.error_budget import ErrorBudget


class HorizonGamma(AbstractGammaSequence):
    """gamma_j = 1/horizon for j = 1..horizon, 0 after: nonincreasing and sums to 1, as LORD++
    requires; spends the budget evenly over the planned life of the set."""

    def __init__(self, horizon: int) -> None:
        super().__init__(c=1.0)
        self.horizon = horizon

    def calc_gamma(self, j: int, *args: Any, **kwargs: Any) -> float:
        return 1.0 / self.horizon if 1 <= j <= self.horizon else 0.0


class BudgetState(BaseModel):
    """Where one held-out set stands before its next gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    alpha: float
    horizon: int
    #: 1-based index of the next gate on this set.
    next_index: int
    #: The level the next gate would be tested at.
    next_level: float
    #: Sum of the levels of every gate so far.
    spent: float
    #: LORD++ wealth left (initial wealth − spent + rewards of promotions).
    wealth: float
    promotions: int
    #: Gates left before the no-promotion budget is used up (0: spent unless promotions earn).
    gates_left_planned: int
    spent_out: bool

    def summary(self) -> str:
        if self.spent_out:
            return (
                f"error budget spent after {self.next_index - 1} gate(s): next level "
                f"{self.next_level:.3g} (alpha {self.alpha}, horizon {self.horizon})"
            )
        return (
            f"gate {self.next_index} of a planned {self.horizon} tested at alpha_t="
            f"{self.next_level:.3g}; spent {self.spent:.3g} of {self.alpha}, wealth "
            f"{self.wealth:.3g}, {self.promotions} promoting gate(s) so far"
        )


def new_method(budget: ErrorBudget) -> LordPlusPlus:
    """A fresh LORD++ test under this budget (the gamma sequence set to `HorizonGamma`)."""
    method = LordPlusPlus(alpha=budget.alpha, wealth=budget.initial_wealth)
    # public attribute (see module docstring), annotated narrower than the base class it takes
    method.seq = HorizonGamma(budget.horizon)  # type: ignore[assignment]
    return method


def replay(outcomes: Sequence[bool], budget: ErrorBudget) -> tuple[LordPlusPlus, list[float]]:
    """LORD++ after the recorded gates (True = the gate promoted), and each gate's level.

    A rejection is replayed as p = 0 and a non-rejection as p = 1: LORD++'s levels depend on
    the past only through the rejection times (and the wealth those levels spent)."""
    method = new_method(budget)
    levels = []
    for rejected in outcomes:
        method.test_one(0.0 if rejected else 1.0)
        levels.append(float(method.last_test_level or 0.0))
    return method, levels


def state(outcomes: Sequence[bool], budget: ErrorBudget) -> BudgetState:
    """The budget state before the next gate, from the outcomes of every earlier gate."""
    method, levels = replay(outcomes, budget)
    probe = copy.deepcopy(method)
    probe.test_one(1.0)  # the next level, computed by the package itself
    next_level = float(probe.last_test_level or 0.0)
    n = len(outcomes)
    return BudgetState(
        method=budget.method,
        alpha=budget.alpha,
        horizon=budget.horizon,
        next_index=n + 1,
        next_level=next_level,
        spent=float(sum(levels)),
        wealth=float(method.wealth),
        promotions=int(sum(bool(o) for o in outcomes)),
        gates_left_planned=max(0, budget.horizon - n),
        spent_out=next_level < budget.min_level or next_level <= 0.0,
    )


class GateBudget(BaseModel):
    """What one gate spent of its held-out set's error budget (in gate.json and proposals)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    alpha_total: float
    horizon: int
    index: int
    #: The level this gate's promotions were tested at (Holm across its candidates at it).
    alpha_tested: float
    p_value: float
    promoted: bool
    spent_before: float
    #: The set's state after this gate (outcomes of concurrent gates included).
    after: BudgetState
    advice: str


def advice(after: BudgetState, heldout_path: str) -> str:
    """When to retire and refresh the set, in one sentence."""
    if after.spent_out:
        return (
            f"retire now: the budget of {heldout_path} is spent; refresh it with "
            "`contextos-lab heldout refresh --spec SPEC --from NEW_CASES.jsonl`"
        )
    left = after.gates_left_planned
    soon = left <= max(1, after.horizon // 10)
    return (
        f"{'retire soon' if soon else 'keep'}: about {left} more gate(s) at alpha_t ≈ "
        f"{after.next_level:.3g} each before the budget of {heldout_path} is spent "
        "(promotions earn budget back); refresh with `contextos-lab heldout refresh`"
    )


def sweep_p_value(adjusted_p: Sequence[float]) -> float:
    """The gate's p-value as one online test: the smallest Holm-adjusted p among candidates
    eligible to promote (Holm's first step is Bonferroni, so the gate rejects its global null
    at level a exactly when this is < a). 1.0 when no candidate is eligible."""
    return float(min(adjusted_p)) if len(adjusted_p) else 1.0


__all__ = [
    "BudgetState",
    "ErrorBudget",
    "GateBudget",
    "HorizonGamma",
    "advice",
    "new_method",
    "replay",
    "state",
    "sweep_p_value",
]
