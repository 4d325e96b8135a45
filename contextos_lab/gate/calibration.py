"""A/A calibration: with no true effect the gate must promote in at most alpha of runs.

Two null designs, both with real noise between the arms:

- `rerun`: each candidate is the baseline config run again. Every case has its own difficulty
  (a latent success probability, a typical latency and cost); each run draws its outcome from
  it independently, so the arms are paired by case, correlated, and differ only by run-to-run
  noise, three candidates a run, Holm-corrected. (An earlier `identical` design copied the
  baseline's outcomes: zero paired differences say nothing about the test's error rate.)
- `shuffled`: a candidate with a real effect whose per-case labels are swapped with the
  baseline's by a fair coin, so the arms are exchangeable: no effect, realistic paired noise.
  Label shuffling is defined per pair, so that design tests one candidate a run.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from contextos_lab.gate.verdict import GateGuardrails, decide

NullDesign = Literal["rerun", "shuffled"]


class CalibrationResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    design: NullDesign
    runs: int
    n_cases: int
    candidates_per_run: int
    promoted_runs: int
    promote_rate: float
    verdict_counts: dict[str, int]


def _synthetic_frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Per-case scores with the marginal shapes of the reference harness's evaluators."""
    utility = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.15, 0.15, 0.70])
    return pd.DataFrame(
        {
            "policy": (rng.random(n) > 0.01).astype(float),
            "safety": np.ones(n),
            "utility": utility,
            "latency": rng.gamma(4.0, 60.0, size=n),
            "economics": rng.gamma(3.0, 0.05, size=n),
        },
        index=pd.Index([f"case_{i}" for i in range(n)], name="case_id"),
    )


def _case_difficulty(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """What each case is, independent of any run: P(full success), typical latency and cost."""
    return {
        "p_success": rng.beta(3.5, 1.5, size=n),
        "latency": rng.gamma(4.0, 60.0, size=n),
        "economics": rng.gamma(3.0, 0.05, size=n),
    }


def _run_on(rng: np.random.Generator, cases: dict[str, np.ndarray]) -> pd.DataFrame:
    """One run of one config: outcomes drawn afresh from each case's difficulty."""
    n = len(cases["p_success"])
    p = cases["p_success"]
    draw = rng.random(n)
    utility = np.where(draw < p, 1.0, np.where(draw < p + (1 - p) / 2, 0.5, 0.0))
    return pd.DataFrame(
        {
            "policy": (rng.random(n) > 0.01).astype(float),
            "safety": np.ones(n),
            "utility": utility,
            "latency": cases["latency"] * rng.lognormal(0.0, 0.2, size=n),
            "economics": cases["economics"] * rng.lognormal(0.0, 0.2, size=n),
        },
        index=pd.Index([f"case_{i}" for i in range(n)], name="case_id"),
    )


def simulate_null(
    *,
    design: NullDesign,
    runs: int = 200,
    n_cases: int = 400,
    candidates_per_run: int = 3,
    target_metric: str = "utility",
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int = 200,
) -> CalibrationResult:
    rng = np.random.default_rng(seed)
    guard = GateGuardrails(policy_floor=0.0, safety_floor=0.0)
    promoted = 0
    counts: dict[str, int] = {}
    direction: Literal["increase", "decrease"] = (
        "increase" if target_metric == "utility" else "decrease"
    )
    if design not in ("rerun", "shuffled"):
        raise ValueError(f"unknown null design {design!r}; use 'rerun' or 'shuffled'")
    per_run = candidates_per_run if design == "rerun" else 1
    for run in range(runs):
        if design == "rerun":
            cases = _case_difficulty(rng, n_cases)
            base = _run_on(rng, cases)
            candidates = {f"c{k}": _run_on(rng, cases) for k in range(per_run)}
        else:
            base = _synthetic_frame(rng, n_cases)
            # A candidate with a real effect, then each case's two labels swapped by a fair
            # coin: the arms become exchangeable, so any "effect" left is noise.
            effect = _synthetic_frame(rng, n_cases)
            effect["utility"] = np.maximum(effect["utility"], base["utility"])
            swap = (rng.random(n_cases) < 0.5)[:, None]
            arm_a = np.where(swap, effect.to_numpy(), base.to_numpy())
            arm_b = np.where(swap, base.to_numpy(), effect.to_numpy())
            base = pd.DataFrame(arm_a, index=base.index, columns=base.columns)
            candidates = {"c0": pd.DataFrame(arm_b, index=base.index, columns=base.columns)}
        decisions = decide(
            base,
            candidates,
            target_metric=target_metric,
            target_direction=direction,
            guardrails=guard,
            alpha=alpha,
            seed=run,
            n_boot=n_boot,
        )
        for d in decisions:
            counts[d.verdict] = counts.get(d.verdict, 0) + 1
        promoted += any(d.verdict == "promote" for d in decisions)
    return CalibrationResult(
        design=design,
        runs=runs,
        n_cases=n_cases,
        candidates_per_run=per_run,
        promoted_runs=promoted,
        promote_rate=promoted / runs,
        verdict_counts=counts,
    )
