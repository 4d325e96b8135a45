"""Paired statistics for baseline vs candidate on the same held-out cases.

Binary outcomes use the exact McNemar test (statsmodels); continuous ones a paired t-test on
the mean difference by default, or the Wilcoxon signed-rank test (scipy). Every delta gets a
percentile bootstrap interval resampled over cases, so the interval respects the pairing. Holm
corrects across candidates.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestPower

ContinuousMethod = Literal["wilcoxon", "t"]


class PairedTest(BaseModel):
    """One metric, one candidate: what was tested, the estimate, its interval and p-value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str
    outcome: Literal["binary", "continuous"]
    test: str
    n: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    discordant: tuple[int, int] | None = None


def mcnemar_exact(baseline: np.ndarray, candidate: np.ndarray) -> tuple[float, tuple[int, int]]:
    """Exact McNemar p-value on paired booleans, and the discordant counts (b: 1→0, c: 0→1)."""
    base = np.asarray(baseline, dtype=bool)
    cand = np.asarray(candidate, dtype=bool)
    b = int(np.sum(base & ~cand))
    c = int(np.sum(~base & cand))
    if b + c == 0:
        return 1.0, (b, c)
    table = [[int(np.sum(base & cand)), b], [c, int(np.sum(~base & ~cand))]]
    return float(mcnemar(table, exact=True).pvalue), (b, c)


def paired_continuous(
    baseline: np.ndarray, candidate: np.ndarray, method: ContinuousMethod = "t"
) -> float:
    """Two-sided p-value of a paired difference.

    The default is the paired t-test because the gate reports and acts on the *mean* delta (and
    its bootstrap interval): a rank test can be significant in the opposite direction to the
    mean on skewed differences (90 cases 10 ms slower, 10 cases 200 ms faster). Wilcoxon stays
    available for a median-shift question.
    """
    diff = np.asarray(candidate, dtype=float) - np.asarray(baseline, dtype=float)
    n = diff.size
    if n < 2 or not np.any(diff != 0):
        return 1.0
    if method == "t":
        if np.ptp(diff) <= 1e-9 * max(1.0, float(np.abs(diff).max())):
            # A constant shift has no variance for t; fall back to the exact sign test.
            return float(stats.binomtest(n, n, 0.5).pvalue)
        return float(stats.ttest_rel(candidate, baseline).pvalue)
    return float(stats.wilcoxon(diff, zero_method="wilcox").pvalue)


def bootstrap_ci(
    diff: np.ndarray, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean paired difference (resampling cases)."""
    diff = np.asarray(diff, dtype=float)
    if diff.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    # Resample case indices in chunks so memory stays bounded for large held-out sets.
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // diff.size)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, diff.size, size=(stop - start, diff.size))
        means[start:stop] = diff[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def paired_test(
    metric: str,
    baseline: np.ndarray,
    candidate: np.ndarray,
    *,
    binary: bool,
    method: ContinuousMethod = "t",
    seed: int = 0,
    n_boot: int = 2000,
) -> PairedTest:
    base = np.asarray(baseline, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    if base.shape != cand.shape:
        raise ValueError(
            f"{metric}: baseline and candidate are not paired ({base.shape} vs {cand.shape})"
        )
    diff = cand - base
    low, high = bootstrap_ci(diff, seed=seed, n_boot=n_boot)
    if binary:
        p, discordant = mcnemar_exact(base.astype(bool), cand.astype(bool))
        test, outcome = "mcnemar_exact", "binary"
    else:
        p, discordant = paired_continuous(base, cand, method), None
        test, outcome = (
            ("wilcoxon_signed_rank" if method == "wilcoxon" else "paired_t"),
            "continuous",
        )
    return PairedTest(
        metric=metric,
        outcome=outcome,
        test=test,
        n=int(base.size),
        baseline_mean=float(base.mean()) if base.size else float("nan"),
        candidate_mean=float(cand.mean()) if cand.size else float("nan"),
        delta=float(diff.mean()) if diff.size else float("nan"),
        ci_low=low,
        ci_high=high,
        p_value=p,
        discordant=discordant,
    )


def holm_adjust(p_values: list[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Same values as statsmodels' `multipletests(method="holm")` (a test checks it), computed
    directly: that function runs a full `gc.collect()` per call, which dominated the gate's
    runtime (and the A/A calibration's) in a process holding many objects.
    """
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return []
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    out = np.empty(p.size)
    out[order] = np.minimum(1.0, stepped)
    return [float(x) for x in out]


def required_sample_size(
    diff: np.ndarray, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Held-out cases a paired test needs to detect the observed mean difference.

    Uses statsmodels' one-sample (paired) t-test power with effect size mean/sd of the
    per-case differences. None when the observed effect is zero (no size suffices).
    """
    diff = np.asarray(diff, dtype=float)
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else 0.0
    mean = float(np.mean(diff)) if diff.size else 0.0
    if sd == 0.0 or mean == 0.0:
        return None
    effect = abs(mean) / sd
    n = TTestPower().solve_power(
        effect_size=effect, alpha=alpha, power=power, alternative="two-sided"
    )
    return int(np.ceil(n))
