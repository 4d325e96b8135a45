"""Stop a trial at the batch of calls that would cross the study's budget.

`budget_stop_reason` prices the next trial's start at what trials typically spend; this guard
makes that safe: before every batch of harness calls (a racing stage or round, a full-set run)
it checks that the batch's worst case still fits. The worst case of a batch is every call
uncached at the dearest known price per call, so a call budget is never exceeded and a money
budget only by a config dearer per call than every one paid before (never with
`usd_per_call_max` and one worker: other workers' running trials count at the start
estimate). A stopped trial is pruned with `budget_stopped` recorded, and the study stops
there (`budget.budget_stopped`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.budget import (
    Budget,
    SpendMeter,
    calls_estimate,
    spend_frame,
    usd_estimate,
    usd_per_call_upper,
)
from contextos_lab.errors import EXIT_HARNESS, ContextosError

if TYPE_CHECKING:
    from contextos_lab.autotune.context import RunContext


class BudgetReached(ContextosError, optuna.TrialPruned):
    """The trial's next batch of calls could take the study over its budget."""

    exit_code = EXIT_HARNESS


@dataclass
class SpendGuard:
    """Called with a batch's worst-case call count before the batch runs."""

    trial: optuna.Trial
    budget: Budget
    meter: SpendMeter
    calls_per_trial: int

    def __call__(self, batch_calls: int) -> None:
        reason = self.crosses(batch_calls)
        if reason is None:
            return
        self.trial.set_user_attr(
            "budget_stopped",
            {"reason": reason, "budget": self.budget.model_dump(mode="json")},
        )
        raise BudgetReached(reason)

    def crosses(self, batch_calls: int) -> str | None:
        """Why the batch could cross the budget, or None."""
        study = self.trial.study
        frame = spend_frame(study)
        others = [
            t
            for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            if t.number != self.trial.number
        ]
        b, m = self.budget, self.meter
        if b.calls is not None:
            spent = (int(frame["calls"].sum()) if len(frame) else 0) + m.calls
            in_flight = len(others) * calls_estimate(frame, self.calls_per_trial)[0]
            if spent + in_flight + batch_calls > b.calls:
                return (
                    f"call budget: {spent} of {b.calls} calls spent; the next {batch_calls} "
                    "calls could cross it"
                )
        if b.usd is not None and len(frame):
            spent_usd = float(frame["usd"].sum()) + m.usd
            in_flight_usd = len(others) * usd_estimate(frame, b, self.calls_per_trial)[0]
            batch_usd = batch_calls * usd_per_call_upper(frame, b)
            if spent_usd + in_flight_usd + batch_usd > b.usd:
                return (
                    f"money budget: ${spent_usd:.4f} of ${b.usd:.4f} spent; the next "
                    f"{batch_calls} calls could cost ${batch_usd:.4f}"
                )
        return None


def first_batch_calls(ctx: RunContext) -> int:
    """The worst-case calls of a trial's first batch: racing's first round of its first stage,
    else the whole set (a trial that cannot pay it is not started: the guard would stop it
    before it learnt anything)."""
    n_total = len(ctx.search)
    if ctx.spec.fidelity != "racing":
        return n_total * ctx.spec.repeats
    size = ctx.spec.racing.sizes(n_total)[0]
    if size < n_total:
        concurrency = ctx.spec.execution_policy().concurrency_for(ctx.harness)
        size = ctx.spec.racing.round_ends(0, size, concurrency)[0]
    return size * ctx.spec.repeats
