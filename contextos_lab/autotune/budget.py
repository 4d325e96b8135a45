"""Cost as a first-class budget: prices, what each trial paid, and when the study must stop.

Only calls the harness really made are paid (cache hits cost nothing). A trial records
`spend = {calls, usd, wall_s, cache_hits}`; the study stops before a trial that is expected to
take the total over its budget, estimated from the trials already paid, not a worst case:
calls as an upper quantile of the calls the finished trials made (racing drops most trials
after a few cases, so the worst case, every case of every repeat uncached, stopped a 5,000-call
study at 4,680), never above that worst case, which stands in until `MIN_OBSERVED` trials have
paid; money as an upper quantile of their cost per call, times the calls the next trial may
make (not twice the dearest call, which stopped a $12 study at $4); wall time as slow as the
slowest trial so far. An estimate can be passed by one trial: the last trial may overshoot a
budget by at most its worst case minus the estimate (benchmarks/node_harness.py measures the
share spent). Economics is priced by the same table.
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
    #: Dearest possible call (e.g. from the API's max_tokens): a hard bound. Without it the
    #: next trial's cost per call is estimated as the `COST_QUANTILE` quantile of what paid
    #: trials cost per call (an estimate: a config dearer than most tried before can
    #: overshoot by part of one trial; set this when that must never happen).
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


#: Which quantile of the paid trials' cost per call estimates the next trial's.
COST_QUANTILE = 0.9


def usd_per_call_estimate(frame: pd.DataFrame) -> float:
    """An upper quantile of the dollars per paid call over the trials that paid any."""
    paid = frame[frame["calls"] > 0]
    if not len(paid):
        return 0.0
    per_call = (paid["usd"] / paid["calls"]).to_numpy(dtype=float)
    return float(np.quantile(per_call, COST_QUANTILE))


#: Paid trials needed before the calls estimate replaces the worst case.
MIN_OBSERVED = 3


def calls_estimate(frame: pd.DataFrame, calls_per_trial: int) -> tuple[int, str]:
    """The calls the next trial is expected to make, and how that was estimated: the
    `COST_QUANTILE` quantile of what paid trials made, at most the worst case."""
    paid = frame["calls"][frame["calls"] > 0].to_numpy(dtype=float)
    if len(paid) < MIN_OBSERVED:
        return calls_per_trial, f"up to {calls_per_trial}"
    estimate = int(np.ceil(np.quantile(paid, COST_QUANTILE)))
    if estimate >= calls_per_trial:
        return calls_per_trial, f"up to {calls_per_trial}"
    return estimate, (
        f"about {estimate} (the {COST_QUANTILE:.0%} quantile of {len(paid)} paid trials; "
        f"up to {calls_per_trial})"
    )


def budget_stop_reason(
    study: optuna.Study, budget: Budget | None, calls_per_trial: int
) -> str | None:
    """Why the next trial must not start (what it is expected to pay would take the total over
    the budget), or None. Trials other workers are running count at the same estimate."""
    if budget is None:
        return None
    frame = spend_frame(study)
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    in_flight = len(running)  # other workers' trials: count them at their worst case too
    calls = int(frame["calls"].sum()) if len(frame) else 0
    if budget.calls is not None:
        expected, how = calls_estimate(frame, calls_per_trial)
        if calls + (1 + in_flight) * expected > budget.calls:
            return (
                f"call budget: {calls} of {budget.calls} calls spent; the next trial may make {how}"
            )
    if budget.usd is not None and len(frame):
        per_call = budget.usd_per_call_max or usd_per_call_estimate(frame)
        usd = float(frame["usd"].sum())
        next_usd = per_call * calls_per_trial
        if usd + (1 + in_flight) * next_usd > budget.usd:
            how = (
                "at usd_per_call_max"
                if budget.usd_per_call_max
                else f"at the {COST_QUANTILE:.0%} quantile of the paid trials' cost per call"
            )
            return (
                f"money budget: ${usd:.4f} of ${budget.usd:.4f} spent; the next trial may "
                f"cost about ${next_usd:.4f} ({calls_per_trial} calls {how})"
            )
    if budget.wall_s is not None and len(frame):
        wall = float(frame["wall_s"].sum())
        if wall + float(frame["wall_s"].max()) > budget.wall_s:
            return f"wall-time budget: {wall:.1f}s of {budget.wall_s:.1f}s used"
    return None


def economics_cents(prices: Prices, results: pd.DataFrame) -> np.ndarray:
    """Cents per decision from the spec's prices (the same table the budget uses)."""
    return prices.usd(results) * 100.0
