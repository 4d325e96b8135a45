"""Cost as a first-class budget: prices, what each trial paid, and when the study must stop.

Only calls the harness really made are paid (cache hits cost nothing). A trial records
`spend = {calls, usd, wall_s, cache_hits}`. Two checks keep a study inside its budget:

- **Before a trial** (`budget_stop_reason`): the next trial is priced as trials are actually
  paid under the current schedule: the `START_QUANTILE` quantile of what the finished trials
  spent (racing ends most trials after a few cases, so the full-set worst case, which stopped a
  $12 racing study at $8.69, is only the cap). The worst case stands in until `MIN_OBSERVED`
  trials have paid. Wall time: as slow as the slowest trial so far.
- **Before every batch of calls inside a trial** (`SpendGuard`, called by
  `objective.execute_and_score`, so each racing stage and round): the batch's worst case (every
  call uncached, at `usd_per_call_max` or the dearest cost per call seen so far) must fit in
  what is left, other workers' running trials counted at the start estimate. A trial that would
  cross the budget stops at its next stage (pruned, `budget_stopped`) instead of being refused
  up front, so a median-priced start never overshoots: calls never; money never with
  `usd_per_call_max` set and one worker, otherwise only by a config dearer per call than every
  one paid before (or, with several workers, by running trials dearer than the estimate).
Economics is priced by the same table.
"""

from __future__ import annotations

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState
from pydantic import BaseModel, ConfigDict, Field, model_validator

from contextos_lab.harness.execution import Execution


class Prices(BaseModel):
    """US dollars per million input / output tokens and per call (all default 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd_per_1m_input: float = Field(default=0.0, ge=0)
    usd_per_1m_output: float = Field(default=0.0, ge=0)
    usd_per_call: float = Field(default=0.0, ge=0)

    def usd(self, results: pd.DataFrame) -> np.ndarray:
        """Dollars per result row (input tokens = tokens - tokens_out); a row whose harness
        reported `cost_usd` costs that instead."""
        total = results["tokens"].to_numpy(dtype=float)
        out = results["tokens_out"].fillna(0).to_numpy(dtype=float)
        priced = (
            (total - out) / 1e6 * self.usd_per_1m_input
            + out / 1e6 * self.usd_per_1m_output
            + self.usd_per_call
        )
        if "cost_usd" not in results:
            return priced
        reported = pd.to_numeric(results["cost_usd"], errors="coerce").to_numpy(dtype=float)
        return np.where(np.isnan(reported), priced, reported)


class Budget(BaseModel):
    """Limits of one study, in total over its trials (baseline included); any may be unset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float | None = Field(default=None, gt=0)
    calls: int | None = Field(default=None, ge=1)
    wall_s: float | None = Field(default=None, gt=0)
    #: Dearest possible call (e.g. from the API's max_tokens): a hard bound on every batch
    #: (`SpendGuard`). Without it a batch is priced at the dearest call paid so far (a config
    #: dearer than every one tried before can overshoot by part of one trial; set this when
    #: that must never happen). A trial's start is priced at what paid calls cost either way.
    usd_per_call_max: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _something(self) -> Budget:
        if self.usd is None and self.calls is None and self.wall_s is None:
            raise ValueError("budget needs at least one of usd, calls, wall_s")
        return self


def trial_spend(execution: Execution, prices: Prices | None) -> dict[str, float | int]:
    """What this trial paid: calls made (not cache hits), dollars of those calls, wall time."""
    usd = 0.0
    if prices is not None and execution.paid_calls:
        fresh = execution.results[~execution.results["cached"].astype(bool)]
        usd = float(prices.usd(fresh).sum()) if len(fresh) else 0.0
    return {
        "calls": int(execution.paid_calls),
        "usd": round(usd, 8),
        "wall_s": round(execution.wall_s, 4),
        "cache_hits": int(execution.cache_hits),
        "errors": execution.n_errors,
    }


class SpendMeter:
    """What the current trial has paid so far, over every execution it made (a racing trial
    runs several stages; a failed or pruned one still paid for what it ran)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.calls, self.usd, self.wall_s, self.cache_hits, self.errors = 0, 0.0, 0.0, 0, 0

    def add(self, execution: Execution, prices: Prices | None) -> None:
        spent = trial_spend(execution, prices)
        self.calls += int(spent["calls"])
        self.usd += float(spent["usd"])
        self.wall_s += float(spent["wall_s"])
        self.cache_hits += int(spent["cache_hits"])
        self.errors += int(spent["errors"])

    @property
    def error_rate(self) -> float:
        runs = self.calls + self.cache_hits
        return self.errors / runs if runs else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "calls": self.calls,
            "usd": round(self.usd, 8),
            "wall_s": round(self.wall_s, 4),
            "cache_hits": self.cache_hits,
            "errors": self.errors,
        }


def spend_frame(study: optuna.Study) -> pd.DataFrame:
    """Spend per finished trial (number, state, calls, usd, wall_s, cache_hits, errors)."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        spend = t.user_attrs.get("spend")
        if spend is None:
            continue
        rows.append({"number": t.number, "state": t.state.name, **spend})
    cols = ["number", "state", "calls", "usd", "wall_s", "cache_hits", "errors"]
    return pd.DataFrame(rows, columns=cols)


def spend_total(study: optuna.Study) -> dict[str, float | int]:
    frame = spend_frame(study)
    return {
        "trials": len(frame),
        "calls": int(frame["calls"].sum()) if len(frame) else 0,
        "usd": round(float(frame["usd"].sum()), 6) if len(frame) else 0.0,
        "wall_s": round(float(frame["wall_s"].sum()), 3) if len(frame) else 0.0,
        "cache_hits": int(frame["cache_hits"].sum()) if len(frame) else 0,
    }


#: Which quantile of the finished trials' spend prices the next trial's start. The median, not
#: an upper quantile: `SpendGuard` stops a trial at its next stage before it can cross the
#: budget, so a high start price only leaves money unspent (0.9 stopped $12 at $8.69).
START_QUANTILE = 0.5
#: Which quantile of the paid trials' cost per call stands for a config's cost per call when
#: no `usd_per_call_max` is set and a whole trial must be priced (before `MIN_OBSERVED`).
COST_QUANTILE = 0.9
#: Paid trials needed before their spend replaces the worst case.
MIN_OBSERVED = 3


def usd_per_call_estimate(frame: pd.DataFrame) -> float:
    """An upper quantile of the dollars per paid call over the trials that paid any."""
    paid = frame[frame["calls"] > 0]
    if not len(paid):
        return 0.0
    per_call = (paid["usd"] / paid["calls"]).to_numpy(dtype=float)
    return float(np.quantile(per_call, COST_QUANTILE))


def usd_per_call_upper(frame: pd.DataFrame, budget: Budget) -> float:
    """The price of one call for a bound: `usd_per_call_max`, else the dearest seen so far."""
    if budget.usd_per_call_max is not None:
        return budget.usd_per_call_max
    paid = frame[frame["calls"] > 0]
    return float((paid["usd"] / paid["calls"]).max()) if len(paid) else 0.0


def _trial_estimate(paid: np.ndarray, worst: float) -> tuple[float, bool]:
    """(estimate, is_worst_case): the `START_QUANTILE` quantile of what paid trials spent,
    capped at the worst case, which stands in until `MIN_OBSERVED` trials have paid."""
    if len(paid) < MIN_OBSERVED:
        return worst, True
    estimate = float(np.quantile(paid, START_QUANTILE))
    return (worst, True) if estimate >= worst else (estimate, False)


def calls_estimate(frame: pd.DataFrame, calls_per_trial: int) -> tuple[int, str]:
    """The calls the next trial is expected to make, and how that was estimated."""
    paid = frame["calls"][frame["calls"] > 0].to_numpy(dtype=float)
    estimate, worst = _trial_estimate(paid, float(calls_per_trial))
    if worst:
        return calls_per_trial, f"up to {calls_per_trial}"
    calls = int(np.ceil(estimate))
    return calls, (
        f"about {calls} (the {START_QUANTILE:.0%} quantile of {len(paid)} paid trials; "
        f"up to {calls_per_trial}; a trial stops at a stage that would cross the budget)"
    )


def usd_estimate(frame: pd.DataFrame, budget: Budget, calls_per_trial: int) -> tuple[float, str]:
    """The dollars the next trial is expected to spend, and how that was estimated. Calls are
    priced as paid calls were; `usd_per_call_max` (a bound for `SpendGuard`'s batches) only
    before any call was paid: priced at it, a budget under one full-set trial at the dearest
    possible call stopped a racing study after its baseline ($0.50 of $12 on the stand-in)."""
    observed = usd_per_call_estimate(frame)
    per_call = observed or budget.usd_per_call_max or 0.0
    worst_usd = per_call * calls_per_trial
    paid = frame["usd"][frame["calls"] > 0].to_numpy(dtype=float)
    estimate, worst = _trial_estimate(paid, worst_usd)
    if worst:
        how = (
            f"at the {COST_QUANTILE:.0%} quantile of the paid trials' cost per call"
            if observed
            else "at usd_per_call_max"
        )
        return worst_usd, f"${worst_usd:.4f} ({calls_per_trial} calls {how})"
    return estimate, (
        f"${estimate:.4f} (the {START_QUANTILE:.0%} quantile of what {len(paid)} paid trials "
        f"spent; up to ${worst_usd:.4f})"
    )


def budget_stop_reason(
    study: optuna.Study, budget: Budget | None, calls_per_trial: int, first_batch: int = 0
) -> str | None:
    """Why the next trial must not start (what it is expected to pay, or its `first_batch` of
    calls at the dearest price, would take the total over the budget, or a trial was already
    stopped by it), or None. Trials other workers are running count at the same estimate."""
    if budget is None:
        return None
    stopped = budget_stopped(study, budget)
    if stopped is not None:
        return stopped
    frame = spend_frame(study)
    in_flight = len(study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)))
    calls = int(frame["calls"].sum()) if len(frame) else 0
    if budget.calls is not None:
        expected, how = calls_estimate(frame, calls_per_trial)
        expected = max(expected, first_batch)
        if calls + (1 + in_flight) * expected > budget.calls:
            return (
                f"call budget: {calls} of {budget.calls} calls spent; the next trial may make {how}"
            )
    if budget.usd is not None and len(frame):
        usd = float(frame["usd"].sum())
        next_usd, how = usd_estimate(frame, budget, calls_per_trial)
        first_usd = first_batch * usd_per_call_upper(frame, budget)
        if first_usd > next_usd:
            next_usd, how = first_usd, f"${first_usd:.4f} (its first {first_batch} calls)"
        if usd + (1 + in_flight) * next_usd > budget.usd:
            return (
                f"money budget: ${usd:.4f} of ${budget.usd:.4f} spent; the next trial may "
                f"cost about {how}"
            )
    if budget.wall_s is not None and len(frame):
        wall = float(frame["wall_s"].sum())
        if wall + float(frame["wall_s"].max()) > budget.wall_s:
            return f"wall-time budget: {wall:.1f}s of {budget.wall_s:.1f}s used"
    return None


def budget_stopped(study: optuna.Study, budget: Budget) -> str | None:
    """The reason a trial of this study was stopped mid-way by this same budget, if one was:
    the study stops there (a raised budget on resume starts afresh)."""
    key = budget.model_dump(mode="json")
    for t in study.get_trials(deepcopy=False, states=(TrialState.PRUNED,)):
        stop = t.user_attrs.get("budget_stopped")
        if isinstance(stop, dict) and stop.get("budget") == key:
            return f"{stop.get('reason')} (trial {t.number} stopped there)"
    return None


def economics_cents(prices: Prices, results: pd.DataFrame) -> np.ndarray:
    """Cents per decision from the spec's prices (the same table the budget uses)."""
    return prices.usd(results) * 100.0
