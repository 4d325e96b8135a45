"""Simulated lives of one held-out set: many successive gates, with and without the budget.

Each simulated *lifetime* is `sweeps` gates on one fixed held-out set of `n_cases` cases; each
gate tests `candidates` candidates against the baseline on the set's binary target (per case:
the candidate newly gets it right, newly wrong, or the same), with the kit's own statistics:
exact McNemar per candidate (statsmodels' exact test is the binomial test on the discordant
pairs, computed here vectorised), Holm across the gate's candidates (`holm_adjust`), and a
promotion when the best eligible Holm-adjusted p is below the gate's level. Two gates:

- `uncorrected`: every gate at alpha (what the kit did before the budget: Holm within a sweep);
- `budget`: the level LORD++ hands the gate from the set's ledger (`gate.heldout.error_budget`).

Designs:
- `null`: no candidate has an effect (each case flips either way with probability `flip`);
- `adaptive`: no effect, but one candidate of each gate is a *near-miss resubmitted*: the
  proposer reads the gate's p-values and perturbs the per-case outcomes of the best
  non-promoted candidate so far (a quarter of its cases redrawn), i.e. hill-climbs on the
  held-out set through what the gate reports;
- `mixed`: a share `effect_rate` of gates carries one candidate with a true gain in the target,
  drawn uniformly from `effect_range` (in utility points); power is the share of those true
  effects promoted, compared between the two gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.stats import binom

from contextos_lab.gate.heldout.error_budget import new_method
from contextos_lab.schemas.error_budget import ErrorBudget

Design = Literal["null", "adaptive", "mixed"]


class ReuseResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    design: Design
    lifetimes: int
    sweeps: int
    n_cases: int
    candidates: int
    #: Share of lifetimes with at least one false promotion, per gate.
    any_false_promotion: dict[str, float]
    #: Share of true effects promoted (mixed design), per gate; None otherwise.
    power: dict[str, float] | None
    true_effects: int
    #: Mean over lifetimes of false promotions / promotions (0 when none), per gate.
    false_discovery_proportion: dict[str, float]
    #: Share of gates the budget refused because the set was spent.
    refused_share: float
    #: Mean level the budget gate tested at, and the last one of a lifetime.
    mean_alpha_t: float
    last_alpha_t: float


def mcnemar_exact_p(newly_right: np.ndarray, newly_wrong: np.ndarray) -> np.ndarray:
    """Two-sided exact McNemar p-values (binomial test of the discordant pairs at 1/2)."""
    n = newly_right + newly_wrong
    k = np.minimum(newly_right, newly_wrong)
    p = np.minimum(1.0, 2.0 * binom.cdf(k, n, 0.5))
    return np.where(n == 0, 1.0, p)


def holm_rows(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values of each row (one gate's candidates); `holm_adjust` row by row,
    vectorised for the simulation (a test checks they agree)."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * np.take_along_axis(p, order, 1), axis=1)
    out = np.empty_like(stepped)
    np.put_along_axis(out, order, np.minimum(stepped, 1.0), axis=1)
    return out


def _draw(rng: np.random.Generator, n: int, up: float, down: float) -> np.ndarray:
    """Per-case outcome differences: +1 newly right, -1 newly wrong, 0 unchanged."""
    u = rng.random(n)
    return np.where(u < up, 1, np.where(u < up + down, -1, 0)).astype(np.int8)


def _counts(
    rng: np.random.Generator,
    design: Design,
    sweeps: int,
    candidates: int,
    n_cases: int,
    flip: float,
    effect_rate: float,
    effect_range: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(newly right, newly wrong, has a true effect), each sweeps x candidates, drawn at once:
    per case the three outcomes are a multinomial draw, so the counts are one too."""
    probs = np.broadcast_to(np.array([flip, flip, 1 - 2 * flip]), (sweeps, candidates, 3)).copy()
    truth = np.zeros((sweeps, candidates), dtype=bool)
    if design == "mixed":
        has = rng.random(sweeps) < effect_rate
        gains = rng.uniform(*effect_range, size=sweeps)
        probs[has, 0, 0] = flip + gains[has] / 2
        probs[has, 0, 1] = flip - gains[has] / 2
        truth[has, 0] = True
    draws = rng.multinomial(n_cases, probs.reshape(-1, 3)).reshape(sweeps, candidates, 3)
    return draws[..., 0].copy(), draws[..., 1].copy(), truth


def _expand(rng: np.random.Generator, right: int, wrong: int, n: int) -> np.ndarray:
    """A per-case outcome vector with these counts, cases in random order."""
    vec = np.zeros(n, dtype=np.int8)
    vec[:right] = 1
    vec[right : right + wrong] = -1
    return rng.permutation(vec)


#: The two gates compared: every gate at alpha, and the level the set's budget hands it.
GATES = ("uncorrected", "budget")


@dataclass(frozen=True)
class _World:
    """What every simulated lifetime shares (`simulate_reuse`'s arguments)."""

    design: Design
    sweeps: int
    n_cases: int
    candidates: int
    flip: float
    effect_rate: float
    effect_range: tuple[float, float]
    alpha: float
    budget: ErrorBudget


@dataclass
class _Tally:
    """Counts summed over lifetimes, per gate."""

    false_any: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GATES, 0))
    promoted_true: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GATES, 0))
    fdp: dict[str, float] = field(default_factory=lambda: dict.fromkeys(GATES, 0.0))
    n_true: int = 0
    refused: int = 0
    levels: list[float] = field(default_factory=list)
    last_levels: list[float] = field(default_factory=list)


def simulate_reuse(
    *,
    design: Design,
    lifetimes: int = 200,
    sweeps: int = 200,
    n_cases: int = 400,
    candidates: int = 3,
    flip: float = 0.08,
    effect_rate: float = 0.2,
    effect_range: tuple[float, float] = (0.04, 0.12),
    alpha: float = 0.05,
    budget: ErrorBudget | None = None,
    seed: int = 0,
) -> ReuseResult:
    world = _World(
        design, sweeps, n_cases, candidates, flip, effect_rate, effect_range, alpha,
        budget or ErrorBudget(alpha=alpha),
    )  # fmt: skip
    rng = np.random.default_rng(seed)
    tally = _Tally()
    for _ in range(lifetimes):
        _lifetime(rng, world, tally)
    n_true = tally.n_true
    return ReuseResult(
        design=design,
        lifetimes=lifetimes,
        sweeps=sweeps,
        n_cases=n_cases,
        candidates=candidates,
        any_false_promotion={g: v / lifetimes for g, v in tally.false_any.items()},
        power={g: v / n_true for g, v in tally.promoted_true.items()} if n_true else None,
        true_effects=n_true,
        false_discovery_proportion={g: v / lifetimes for g, v in tally.fdp.items()},
        refused_share=tally.refused / (lifetimes * sweeps),
        mean_alpha_t=float(np.mean(tally.levels)),
        last_alpha_t=float(np.mean(tally.last_levels)),
    )


def _lifetime(rng: np.random.Generator, w: _World, tally: _Tally) -> None:
    """`w.sweeps` gates on one held-out set with a fresh budget, added to `tally`."""
    method = new_method(w.budget)
    fp = dict.fromkeys(GATES, False)
    counts = {g: [0, 0] for g in GATES}  # [false, all] promotions
    near_miss: tuple[float, np.ndarray] | None = None
    adaptive = w.design == "adaptive"
    right, wrong, truth_all = _counts(
        rng, w.design, w.sweeps, w.candidates, w.n_cases, w.flip, w.effect_rate, w.effect_range
    )
    adjusted_all = holm_rows(mcnemar_exact_p(right, wrong))
    for t in range(w.sweeps):
        truth = truth_all[t]
        first = _first_outcomes(rng, w, right, wrong, t, near_miss) if adaptive else None
        adjusted = (
            holm_rows(mcnemar_exact_p(right[t : t + 1], wrong[t : t + 1]))[0]
            if adaptive
            else adjusted_all[t]
        )
        eligible = right[t] > wrong[t]
        best = float(adjusted[eligible].min()) if eligible.any() else 1.0
        method.test_one(best)
        level = float(method.last_test_level or 0.0)
        if level < w.budget.min_level:  # spent: the kit refuses the gate
            level = 0.0
            tally.refused += 1
        tally.levels.append(level)
        for gate, a in (("uncorrected", w.alpha), ("budget", level)):
            promoted = eligible & (adjusted < a)
            fp[gate] |= bool((promoted & ~truth).any())
            tally.promoted_true[gate] += int((promoted & truth).sum())
            counts[gate][0] += int((promoted & ~truth).sum())
            counts[gate][1] += int(promoted.sum())
        tally.n_true += int(truth.sum())
        if first is not None:
            open_p = np.where(eligible & (adjusted >= level), adjusted, np.inf)
            near_miss = _near_miss(rng, w, right[t], wrong[t], first, open_p, near_miss)
    tally.last_levels.append(tally.levels[-1])
    for gate in GATES:
        tally.false_any[gate] += fp[gate]
        tally.fdp[gate] += counts[gate][0] / counts[gate][1] if counts[gate][1] else 0.0


def _first_outcomes(
    rng: np.random.Generator,
    w: _World,
    right: np.ndarray,
    wrong: np.ndarray,
    t: int,
    near_miss: tuple[float, np.ndarray] | None,
) -> np.ndarray:
    """Gate `t`'s first candidate, per case (adaptive design): the best near-miss so far with
    a quarter of its cases redrawn (its counts written back into `right` / `wrong`), or, before
    any near-miss, its drawn counts in random case order."""
    if near_miss is None:
        return _expand(rng, right[t, 0], wrong[t, 0], w.n_cases)
    base = near_miss[1].copy()
    redraw = rng.random(w.n_cases) < 0.25
    base[redraw] = _draw(rng, int(redraw.sum()), w.flip, w.flip)
    right[t, 0], wrong[t, 0] = int((base == 1).sum()), int((base == -1).sum())
    return base


def _near_miss(
    rng: np.random.Generator,
    w: _World,
    right: np.ndarray,
    wrong: np.ndarray,
    first: np.ndarray,
    open_p: np.ndarray,
    near_miss: tuple[float, np.ndarray] | None,
) -> tuple[float, np.ndarray] | None:
    """The best eligible candidate not promoted so far (lowest p), kept to be resubmitted."""
    i = int(np.argmin(open_p))
    if np.isfinite(open_p[i]) and (near_miss is None or open_p[i] < near_miss[0]):
        vec = first if i == 0 else _expand(rng, right[i], wrong[i], w.n_cases)
        return float(open_p[i]), vec
    return near_miss
