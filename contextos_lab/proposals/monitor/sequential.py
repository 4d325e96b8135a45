"""The monitor's "worse" test: a calendar group-sequential design, calibrated by simulation at
the baseline slice's own score distribution, with one error budget for the release.

Why this design (issue 42). A monitor run every day looks at the data again and again; a fresh
test per call (the old Mann–Whitney at 0.05 per evaluator) rolled back ~30 % of releases that
changed nothing. Two families keep the error at its share however often one looks:
anytime-valid procedures (mSPRT, confidence sequences, e-processes — `confseq`, `expectation`,
`savvi`) and group-sequential designs with alpha spending. At this kit's scale (≈10 decisions a
day, a 200-decision baseline, 0/1 floor scores near 1.0) the issue's own simulation found a
normal-mixture mSPRT caught a 7-point policy drop in 14 days 20 % of the time, a calendar
group-sequential boundary 78 %: the anytime-valid methods pay for validity at *every* instant,
while the monitor only needs validity at the window's day boundaries. So:

* **Looks are the window's calendar days**, not calls: look j uses the scorecards computed
  before `opened_at + j days`; calling `monitor` hourly or after every scorecard reaches the same
  looks, so it adds none. A day is looked at once it has ended.
* **Statistic** per evaluator, oriented so that large = harm:
  Z_j = s·(baseline mean − window mean through day j) / sqrt(v_b·(1/n_b + 1/n_j)),
  s = +1 where a drop is harm (policy, safety, utility), −1 where a rise is (latency, cost);
  v_b is the baseline variance. Standardising by the *baseline's* variance (not the pooled one)
  keeps the power where it matters: failures are rare at the baseline rate.
* **Boundary** b_j, computed from the data, not a normal table: 0/1 scores near 1.0 are far
  from normal. Under "the release changes nothing" baseline and window days are one sample, so
  the null law is estimated from everything seen so far (baseline ∪ window days 1..k — pooling
  is what keeps the error at its share: plugging in the baseline alone made a lucky baseline's
  boundary too tight and doubled the error in simulation). b_k keeps the chance of crossing
  *first* at look k within α_e(t_k) less what looks 1..k−1 spent (each under its own day's
  law, stored with the look), with α_e(t) = α_e·ln(1 + (e − 1)·t), t = j/K (Lan–DeMets
  Pocock-type spending on the calendar fraction: harm should be caught early, so the budget is
  not saved for the end as O'Brien–Fleming would); what a discrete boundary leaves unspent
  carries to the next look, and the looks spend at most α_e over the window. Two-valued scores are
  computed exactly (binomial dynamic programming over the baseline's and the window's running
  counts, at the window's observed daily counts — arrivals carry no information about scores);
  other scores by SIMS seeded draws (days resampled, large groups normal), the tail read off
  the normal fitted to the simulated Z.
* **Deterministic**: the draws are seeded by the window id, the evaluator and the look; a look's
  boundary is stored with it and reused (frozen) by later looks.
* **Evidence**: the sequential p-value p_k = the chance, under the same law, of coming at least
  as close to the boundaries by look k as the data did (crossing ⇔ p_k ≤ α_e spent, up to
  discreteness); the repeated confidence interval delta ± b_k·se_k (Jennison & Turnbull); and
  the day the boundary would be crossed if the current difference held at the current rate.

The budget: α = 0.05 for the release, split (Bonferroni) as SHARES — the floors take the larger
shares, recurrence takes RECURRENCE_SHARE. Written here rather than with statsmodels' normal
group-sequential helpers because those assume a normal statistic; the discrete calibration is
the point. The design is derived only from the baseline slice, the window's calendar and the
observed daily counts; nothing is tuned to any scenario.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, norm

ALPHA = 0.05
#: Per-evaluator shares of ALPHA (floors larger); with RECURRENCE_SHARE they sum to ALPHA.
SHARES: dict[str, float] = {
    "policy": 0.03,
    "safety": 0.01,
    "utility": 0.005,
    "latency": 0.0015,
    "cost": 0.0015,
}
RECURRENCE_SHARE = 0.002
#: +1: a drop is harm; −1: a rise is harm.
HARM_SIGN: dict[str, int] = {"policy": 1, "safety": 1, "utility": 1, "latency": -1, "cost": -1}
BOUNDED = frozenset({"policy", "safety", "utility"})
SIMS = 4000
CLT_SIZE = 30
SPENDING = "Lan-DeMets Pocock-type alpha*ln(1+(e-1)t), t = day/window days"


def spent(alpha: float, day: int, days: int) -> float:
    """Cumulative error an evaluator may have spent by calendar look `day` of `days`."""
    return alpha * math.log(1 + (math.e - 1) * min(day, days) / days)


def _stream(seed: str, *parts: object) -> np.random.Generator:
    digest = hashlib.sha256("|".join([seed, *map(str, parts)]).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def z_stat(sign: int, mean_b, var_b: float, n_b: int, mean_w, n_w) -> np.ndarray:
    """Harm-oriented standardised difference (scalars or arrays)."""
    se = np.sqrt(var_b * (1.0 / max(n_b, 1) + 1.0 / np.maximum(n_w, 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = sign * (mean_b - mean_w) / se
    return np.where(se > 0, z, 0.0)


def group_sums(pool: np.ndarray, sizes: tuple[int, ...], seed: str) -> np.ndarray:
    """SIMS × groups: sums of groups of `sizes` (baseline first, then each window day) drawn
    with replacement from `pool` (all seen so far: the null law estimated under "no change").
    Groups of CLT_SIZE or more are drawn from the normal with the pool's moments (their sums
    are near normal for non-0/1 scores; 0/1 scores take the exact path instead)."""
    rng = _stream(seed, "look", *sizes)
    out = np.empty((SIMS, len(sizes)))
    mu, sd = float(pool.mean()), float(pool.std())
    for g, n in enumerate(sizes):
        if n >= CLT_SIZE:
            out[:, g] = n * mu + sd * math.sqrt(n) * rng.standard_normal(SIMS)
        else:
            out[:, g] = pool[rng.integers(0, pool.size, size=(SIMS, n))].sum(axis=1)
    return out


@dataclass(frozen=True)
class Look:
    """One calendar look: its boundary (inf: no crossing possible yet), sequential p-value and
    the error it spent — the chance of crossing first here under this look's own null law."""

    boundary: float
    p_value: float
    spent: float = 0.0


def _cut(z: np.ndarray, mass: np.ndarray, budget: float) -> tuple[float, float]:
    """Smallest b with mass{Z > b} ≤ budget (ties kept together: never over budget), and that
    mass."""
    order = np.argsort(-z, kind="stable")
    zs, cum = z[order], np.cumsum(mass[order])
    last = np.r_[zs[1:] != zs[:-1], True]  # end of each tie group
    ok = last & (cum <= budget + 1e-15)
    if not ok.any():
        return (float(zs[0]) if zs.size else math.inf), 0.0
    i = int(np.nonzero(ok)[0][-1])
    return (float(zs[i + 1]) if i + 1 < zs.size else -math.inf), float(cum[i])


def _binary_look(
    name: str,
    baseline: np.ndarray,
    days: list[np.ndarray],
    earlier: tuple[float, ...],
    budget: float,
    observed: np.ndarray,
) -> Look:
    """Exact computation for two-valued scores: the chance of crossing, over the baseline's
    count of the low value and the window's running count, by dynamic programming."""
    pool = np.concatenate([baseline, *days])
    lo, hi = np.unique(pool)
    q = float(np.mean(pool == lo))
    nb = baseline.size
    xb = np.arange(nb + 1)
    wb = binom.pmf(xb, nb, q)
    xb, wb = xb[wb > 1e-13], wb[wb > 1e-13]
    mean_b = (xb * lo + (nb - xb) * hi) / max(nb, 1)
    _, var_s = smoothed_baseline(name, baseline)
    total = sum(d.size for d in days)
    seen = int(sum(np.sum(d == lo) for d in days))
    # running counts beyond the 1 − 1e-12 quantile carry no mass worth the arithmetic
    width = min(total, max(seen, int(binom.ppf(1 - 1e-12, total, q)))) + 1
    c, n, zs = np.arange(width), 0, []
    for d in days:
        n += d.size
        mean_w = (np.minimum(c, n) * lo + (n - np.minimum(c, n)) * hi) / max(n, 1)
        zs.append(z_stat(HARM_SIGN[name], mean_b[:, None], var_s, nb, mean_w[None, :], n))
    moves = []  # day j's transition of the window's running count: a banded matrix
    for d in days:
        move = np.zeros((width, width))
        for t, w in enumerate(binom.pmf(np.arange(d.size + 1), d.size, q)):
            move[np.arange(width - t), np.arange(t, width)] = w
        moves.append(move)

    def run(bounds: list[float]) -> tuple[np.ndarray, float]:
        """Mass not yet across `bounds` at the last look (before its cut), mass across."""
        state = np.zeros((xb.size, width))
        state[:, 0] = wb
        gone = 0.0
        for j, move in enumerate(moves):
            state = state @ move
            if j < len(moves) - 1 and math.isfinite(bounds[j]):
                over = zs[j] > bounds[j]
                gone += float(state[over].sum())
                state[over] = 0.0
        return state, gone

    state, _ = run(list(earlier))
    b_k, used = _cut(zs[-1].ravel(), state.ravel(), budget)
    bounds = [*earlier, b_k]
    finite = [math.isfinite(b) for b in bounds]
    if not any(finite):
        return Look(b_k, 1.0, used)
    obs = max(float(o) - b for o, b, f in zip(observed, bounds, finite, strict=True) if f)
    state, gone = run([b + obs - 1e-9 for b in bounds])
    last = float(state[zs[-1] > b_k + obs - 1e-9].sum()) if finite[-1] else 0.0
    return Look(b_k, float(min(1.0, gone + last)), used)


def calibrate_look(
    name: str,
    baseline: np.ndarray,
    days: list[np.ndarray],
    earlier: tuple[float, ...],
    n_days: int,
    seed: str,
    spent_before: float | None = None,
) -> Look:
    """Boundary and p-value for look k = len(days), given the frozen boundaries of looks < k
    and the error those looks spent (`spent_before`, each under its own law; None: assume each
    spent its whole increment).

    The null law is estimated from everything seen so far (baseline ∪ days 1..k, "no change"
    makes them one sample); b_k is the cut that keeps the chance of crossing *first* at look k
    within what the spending function allows by now, α_e(t_k), less what earlier looks spent.
    The earlier looks' spending is taken as recorded (each under the law of its own day), never
    recomputed under today's: re-estimating it under a law that harm has since moved makes the
    early looks seem to have overspent and starves the later ones (measured in
    docs/monitoring.md, "Measured"). Discrete 0/1 boundaries rarely spend their whole
    allowance; the remainder is carried to the next look instead of lost, and the looks'
    spending still adds up to at most α_e over the window. Two-valued scores are computed
    exactly; others by SIMS seeded draws with the tail of the normal fitted to the simulated Z."""
    k = len(days)
    before = spent(SHARES[name], k - 1, n_days) if spent_before is None else spent_before
    step = max(0.0, spent(SHARES[name], k, n_days) - before)
    observed = observed_z(name, baseline, days)
    pool = np.concatenate([baseline, *days])
    if np.unique(pool).size == 1 or sum(d.size for d in days) == 0:
        return Look(math.inf, 1.0)
    if np.unique(pool).size == 2:
        return _binary_look(name, baseline, days, earlier, step, observed)
    sizes = (baseline.size, *(d.size for d in days))
    sums = group_sums(pool, sizes, f"{seed}|{name}")
    _, var_s = smoothed_baseline(name, baseline)
    cum_n = np.cumsum(sizes[1:])
    mw = np.cumsum(sums[:, 1:], axis=1) / np.maximum(cum_n, 1)
    mb = sums[:, :1] / max(baseline.size, 1)
    z = z_stat(HARM_SIGN[name], mb, var_s, baseline.size, mw, cum_n)
    bounds = np.array([*earlier, math.inf])
    crossed = np.any(z[:, :-1] > bounds[:-1], axis=1) if k > 1 else np.zeros(SIMS, dtype=bool)
    alive = z[~crossed, -1]
    # non-0/1 scores: the simulated Z at a look is near normal (sums of ≥ 10 draws); a rank cut
    # would need ~1/increment draws for the small shares, so the tail is read off the normal
    # fitted to the simulated paths still alive
    b = float(alive.mean() + alive.std() * norm.isf(step)) if alive.size > 1 else math.inf
    used = step * alive.size / SIMS if math.isfinite(b) else 0.0
    bounds[-1] = b
    finite = np.isfinite(bounds)
    if not finite.any():
        return Look(b, 1.0, used)
    obs = float(np.max(observed[finite] - bounds[finite]))
    null = np.max(z[:, finite] - bounds[finite], axis=1)
    return Look(b, float((1 + np.sum(null >= obs - 1e-12)) / (SIMS + 1)), used)


def observed_z(name: str, baseline: np.ndarray, days: list[np.ndarray]) -> np.ndarray:
    """Z at each look 1..k on the data."""
    mean_b, var_s = smoothed_baseline(name, baseline)
    n = np.cumsum([d.size for d in days])
    tot = np.cumsum([d.sum() for d in days])
    return np.asarray(
        z_stat(HARM_SIGN[name], mean_b, var_s, baseline.size, tot / np.maximum(n, 1), n)
    )


def smoothed_baseline(name: str, baseline: np.ndarray) -> tuple[float, float]:
    """(baseline mean, its variance with one imagined decision at the harmful extreme): the
    statistic's scale, never zero, so an all-1.0 baseline does not make one failure infinite."""
    extreme = 0.0
    if name not in BOUNDED:
        extreme = 2.0 * float(baseline.max()) if baseline.size and baseline.max() > 0 else 1.0
    nb = baseline.size
    mean = float(baseline.mean()) if nb else 0.0
    var = float(baseline.var()) if nb else 0.0
    return mean, (var * nb + (extreme - mean) ** 2 * nb / (nb + 1)) / (nb + 1)


def decisive_day(
    sign: int,
    delta: float,
    var_s: float,
    n_b: int,
    per_day: float,
    day: int,
    days: int,
    boundary: float,
) -> int | None:
    """First day ≤ `days` the boundary would be crossed if `delta` and the arrival rate held
    (later boundaries approximated by today's, which Pocock-type spending keeps nearly flat)."""
    if not math.isfinite(boundary) or per_day <= 0 or sign * -delta <= 0:
        return None
    for j in range(max(day, 1), days + 1):
        if float(z_stat(sign, 0.0, var_s, n_b, delta, per_day * j)) > boundary:
            return j
    return None
