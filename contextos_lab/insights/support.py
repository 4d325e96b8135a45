"""Computed support for an insight: its rate against the baseline rate, and its trend.

The test is one-sided Fisher's exact test on the 2×2 table (scipy `fisher_exact`, alternative
"greater"): does the pattern's rate (hits among the pattern's stratum) exceed the baseline rate
(the same outcome among the rule's comparison runs)? Exact, because patterns are found at five
members and the normal approximation (the two-proportion z-test used before) is too liberal at
such counts: under `cluster --store` re-runs on null data it alone turned patterns into findings
(docs/monitoring.md, "Findings across re-runs"). The two-proportion z (statsmodels
`proportions_ztest`) is kept beside it as a scale of the difference, not as the test. The
p-value, both rates, the Wilson 95% interval of the pattern's rate and the test name travel in
`Insight.support`. Without a baseline population, or with no variance at all, no test is run
(`p_value` None).

A *tautological* rate gets no interval: when every compared run has the outcome (or none has),
e.g. every run of a source failed, the rate 1.0 says nothing and is labelled so
(`rate_note`), never given a Wilson interval that looks like evidence.

`Insight.confidence` is set later, once per source, by `findings.fdr.control_fdr`: 1 − the
Benjamini–Hochberg q-value of this test among all tests of that source (0 when no test ran);
`support_for` returns 1 − p only as the value of a family of one.

The trend is an OLS fit (statsmodels) of the pattern's daily occurrence count against the day
index over the observation window, zero-count days included: slope per day, its p-value and a
direction (`rising`/`falling` at p < 0.05, else `flat`; `insufficient` under 3 days). Data
with no clock gets no trend at all.

Where no run of the pattern's scope succeeded there is nothing to contrast with: support is then
`share_of_failures` (the share of all failures the pattern explains, Wilson interval), labelled
"no successful baseline", never a p-value of a test that could not be run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from contextos_lab.schemas.clock import NO_CLOCK

ALPHA = 0.05
TEST = "fisher_exact(2x2, alternative=greater)"
NO_BASELINE = "no successful baseline"


@dataclass(frozen=True)
class Counts:
    """Outcome hits and population sizes inside the pattern's stratum and outside it."""

    hits_in: int
    n_in: int
    hits_out: int
    n_out: int

    def to_dict(self) -> dict[str, int]:
        return {k: int(v) for k, v in asdict(self).items()}


def rate_test(counts: Counts) -> dict[str, Any]:
    c = counts
    rate_in = c.hits_in / c.n_in if c.n_in else 0.0
    rate_out = c.hits_out / c.n_out if c.n_out else None
    lo, hi = (
        proportion_confint(c.hits_in, c.n_in, alpha=ALPHA, method="wilson")
        if c.n_in
        else (0.0, 1.0)
    )
    out: dict[str, Any] = {
        **c.to_dict(),
        "rate": rate_in,
        "baseline_rate": rate_out,
        "rate_ci95": [float(lo), float(hi)],
        "test": TEST,
        "z": None,
        "p_value": 1.0,
    }
    pooled = (c.hits_in + c.hits_out) / (c.n_in + c.n_out) if c.n_in + c.n_out else 0.0
    if c.n_in and pooled in (0.0, 1.0):
        out["rate_ci95"] = None
        out["rate_note"] = (
            f"tautological: every compared run {'has' if pooled else 'lacks'} the outcome "
            f"(rate {rate_in:g} with nothing to compare)"
        )
    if c.n_in == 0 or c.n_out == 0:
        out["test"] = "none: no baseline population outside the pattern"
        out["p_value"] = None
    elif pooled in (0.0, 1.0):
        out["test"] = "none: outcome has no variance"
        out["p_value"] = None
    else:
        z, _ = proportions_ztest(
            np.array([c.hits_in, c.hits_out]), np.array([c.n_in, c.n_out]), alternative="larger"
        )
        table = [[c.hits_in, c.n_in - c.hits_in], [c.hits_out, c.n_out - c.hits_out]]
        _, p = fisher_exact(table, alternative="greater")
        out["z"], out["p_value"] = float(z), float(p)
    return out


def confidence_of(test: dict[str, Any]) -> float:
    p = test.get("p_value")
    if p is None or not math.isfinite(p):
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - p)))


def share_of_failures(hits: int, failures: int) -> dict[str, Any]:
    """Support where no run succeeded to contrast with: the share of all failures the pattern
    explains, with its Wilson 95% interval. No test is run, so there is no p-value."""
    lo, hi = (
        proportion_confint(hits, failures, alpha=ALPHA, method="wilson") if failures else (0, 1)
    )
    return {
        "baseline": NO_BASELINE,
        "test": f"none: {NO_BASELINE}",
        "share_of_failures": hits / failures if failures else 0.0,
        "share_ci95": [float(lo), float(hi)],
        "failures": int(failures),
        "z": None,
        "p_value": None,
    }


def trend(times: pd.Series, start: datetime, end: datetime) -> dict[str, Any]:
    """OLS of daily counts on day index over [start, end] (UTC days, zero days included).

    Data without a clock (every stamp `NO_CLOCK`) has no trend: none is made up from order."""
    stamps = pd.to_datetime(times, utc=True)
    if len(stamps) and bool((stamps == pd.Timestamp(NO_CLOCK)).all()):
        return {"method": None, "direction": None, "reason": "no timestamps in the data"}
    days = pd.date_range(
        pd.Timestamp(start).tz_convert("UTC").floor("D"),
        pd.Timestamp(end).tz_convert("UTC").floor("D"),
        freq="D",
    )
    daily = stamps.dt.floor("D").value_counts().reindex(days, fill_value=0)
    result: dict[str, Any] = {"method": "OLS daily count ~ day", "days": len(days)}
    if len(days) < 3:
        return {**result, "slope_per_day": None, "p_value": None, "direction": "insufficient"}
    y = daily.to_numpy(dtype=float)
    x = sm.add_constant(np.arange(len(y), dtype=float))
    fit = sm.OLS(y, x).fit()
    slope = float(fit.params[1])
    p = float(fit.pvalues[1]) if np.isfinite(fit.pvalues[1]) else 1.0
    direction = "flat" if p >= ALPHA or slope == 0 else ("rising" if slope > 0 else "falling")
    return {**result, "slope_per_day": slope, "p_value": p, "direction": direction}


def support_for(
    counts: Counts, times: pd.Series, start: datetime, end: datetime
) -> tuple[float, dict[str, Any]]:
    """(confidence, support dict) for one pattern; see the module docstring for the rules."""
    test = rate_test(counts)
    return confidence_of(test), {**test, "trend": trend(times, start, end)}
