"""Paired statistics for baseline vs candidate on the same held-out cases.

Binary outcomes use the exact McNemar test (statsmodels); continuous ones a paired t-test on
the mean difference by default, or the Wilcoxon signed-rank test (scipy). Every delta gets a
percentile bootstrap interval resampled over cases, so the interval respects the pairing. Holm
corrects across candidates.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator
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

    @field_validator(
        "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value", mode="before"
    )
    @classmethod
    def _null_is_nan(cls, value: object) -> object:
        """JSON writes a NaN (a metric with no paired case: policy not scored) as null; read
        it back as NaN, so gate.json round-trips."""
        return float("nan") if value is None else value


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
    if n < 2 or not np.all(np.isfinite(diff)) or not np.any(diff != 0):
        return 1.0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "t":
            if np.ptp(diff) <= 1e-9 * max(1.0, float(np.abs(diff).max())):
                # A constant shift has no variance for t; fall back to the exact sign test.
                return _defined_p(stats.binomtest(n, n, 0.5).pvalue)
            scale = float(np.abs(diff).max())
            if scale > 1e100:
                # The same statistic on scaled differences: huge scores would overflow the
                # variance (t is scale-free).
                return _defined_p(stats.ttest_1samp(diff / scale, 0.0).pvalue)
            return _defined_p(stats.ttest_rel(candidate, baseline).pvalue)
        try:
            return _defined_p(stats.wilcoxon(diff, zero_method="wilcox").pvalue)
        except ValueError:  # every difference zero after wilcox's zero handling
            return 1.0


def _defined_p(p: float) -> float:
    """A p-value a decision can use: a NaN (a test that could not be computed) counts as no
    evidence (1.0), never as significance."""
    p = float(p)
    return min(1.0, max(0.0, p)) if math.isfinite(p) else 1.0


def bootstrap_ci(
    diff: np.ndarray, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean paired difference (resampling cases)."""
    diff = np.asarray(diff, dtype=float)
    if diff.size == 0 or not np.all(np.isfinite(diff)):
        return (float("nan"), float("nan"))
    scale = float(np.abs(diff).max())
    if scale > 1e100:  # resample scaled differences so a sum of huge ones cannot overflow
        low, high = bootstrap_ci(diff / scale, n_boot=n_boot, level=level, seed=seed)
        return low * scale, high * scale
    rng = np.random.default_rng(seed)
    # Resample case indices in chunks so memory stays bounded for large held-out sets.
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // diff.size)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, diff.size, size=(stop - start, diff.size))
        means[start:stop] = diff[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    with np.errstate(all="ignore"):
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
    # Only pairs with finite scores on both sides are compared (the verdict names any others
    # as not computable); a difference that overflows counts as not finite too.
    with np.errstate(all="ignore"):
        keep = np.isfinite(base) & np.isfinite(cand) & np.isfinite(cand - base)
    base, cand = base[keep], cand[keep]
    diff = cand - base
    low, high = bootstrap_ci(diff, seed=seed, n_boot=n_boot)
    outcome: Literal["binary", "continuous"]
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
        baseline_mean=mean_of(base),
        candidate_mean=mean_of(cand),
        delta=mean_of(diff),
        ci_low=low,
        ci_high=high,
        p_value=p,
        discordant=discordant,
    )


def mean_of(values: np.ndarray) -> float:
    """The mean, NaN when there is nothing (or nothing finite) to average."""
    if values.size == 0:
        return float("nan")
    scale = float(np.abs(values).max())
    if scale > 1e100:  # a sum of huge values would overflow
        return float(np.mean(values / scale)) * scale
    return float(np.mean(values))


def holm_adjust(p_values: list[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Same values as statsmodels' `multipletests(method="holm")` (a test checks it), computed
    directly: that function runs a full `gc.collect()` per call, which dominated the gate's
    runtime (and the A/A calibration's) in a process holding many objects.
    """
    p = np.asarray([_defined_p(x) for x in p_values], dtype=float)
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
    per-case differences. None when no size is computable (see `sample_size_reason`).
    """
    return sample_size(diff, alpha=alpha, power=power)[0]


def sample_size(
    diff: np.ndarray, *, alpha: float = 0.05, power: float = 0.8
) -> tuple[int | None, str]:
    """The required held-out size and how it was obtained, or None and why not.

    statsmodels' `solve_power` does not converge for some effects (it returns NaN with a
    ConvergenceWarning, or raises): the normal approximation with Guenther's correction,
    n = ((z_{1-a/2} + z_power) / d)^2 + z_{1-a/2}^2 / 2, then stands in, and the reason says
    so. A paired test needs at least 2 cases, so the answer is never below 2.
    """
    diff = np.asarray(diff, dtype=float)
    if diff.size == 0:
        return None, "not computable: no paired cases"
    if not np.all(np.isfinite(diff)):
        return None, "not computable: non-finite per-case differences"
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        return None, f"not computable: alpha {alpha} / power {power} outside (0, 1)"
    scale = float(np.abs(diff).max())
    if scale == 0.0:
        return None, "not computable: the observed effect is zero (no size suffices)"
    scaled = diff / scale
    mean = float(np.mean(scaled))
    sd = float(np.std(scaled, ddof=1)) if diff.size > 1 else 0.0
    if mean == 0.0:
        return None, "not computable: the observed effect is zero (no size suffices)"
    if not sd > 0.0 or not math.isfinite(sd):
        return None, (
            "not computable: the per-case differences have no variance "
            + ("(a single case)" if diff.size == 1 else "(every case moved by the same amount)")
        )
    effect = abs(mean) / sd
    n = float("nan")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(ValueError, ArithmeticError, RuntimeError):
            n = float(
                TTestPower().solve_power(
                    effect_size=effect, alpha=alpha, power=power, alternative="two-sided"
                )
            )
    how = "paired t-test power (statsmodels)"
    if not math.isfinite(n) or n <= 0:
        z_a = float(stats.norm.ppf(1.0 - alpha / 2.0))
        z_b = float(stats.norm.ppf(power))
        n = ((z_a + z_b) / effect) ** 2 + z_a**2 / 2.0
        how = "normal approximation (statsmodels' t-test power did not converge)"
    if not math.isfinite(n) or n > 1e12:
        return None, f"not computable: the effect ({effect:.3g} sd) is too small to size"
    return max(2, math.ceil(n)), how
