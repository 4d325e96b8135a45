"""Breaches the cases already run prove, whatever the unseen cases would score.

Racing's stage-end checks (`racing.drop_reason`) are statistical: confidence bounds at z, taken
at a few fixed looks. Between them a stage runs in rounds (`RacingSchedule.round_ends`), and
after each round only these exact checks run: a floor the config breaches even if every unseen
case scored its best (one failing case against a 1.0 floor), an error rate already past
`max_error_rate`, an accepted delta breached even at the best the unseen cases allow. Being
certain, they can be looked at after every round without the repeated-looks inflation a
statistical test would suffer, and a config that fails the smoke stage on its third case stops
there instead of paying for the other thirty (seed 001: "lightweight validation before
expensive evaluation").
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.racing.bounds import SCORE_BOUNDS, hard_bounds
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: A proof needs a breach past float rounding (the same margin racing's drops use).
PROOF_MARGIN = 1e-9


def proven_breach(
    ctx: RunContext,
    per_case: pd.DataFrame,
    baseline: Mapping[str, float],
    n_errors: int,
    repeats: int,
) -> tuple[str, float] | None:
    """(why, margin > 0) when `per_case` (the first cases of the racing order, one row each)
    and the `n_errors` errored runs among them already prove the config infeasible on the
    full search set; None otherwise."""
    n, n_total = len(per_case), len(ctx.search)
    if n == 0 or not _within_score_bounds(per_case):
        return None  # a proof leans on every score's range: out of range, prove nothing
    for name, floor in ctx.spec.guardrails.floors.model_dump().items():
        _, best = hard_bounds(per_case[name].to_numpy(dtype=float), n_total, name)
        if floor - best > PROOF_MARGIN:
            return (
                f"floor {name}: at most {best:.6g} on the full set even if every unseen case "
                f"passes ({n} cases run, mean {float(per_case[name].mean()):.6g}) < {floor}",
                floor - best,
            )
    cap = ctx.spec.max_error_rate
    if cap is not None:
        least = n_errors / (n_total * max(repeats, 1))
        if least - cap > PROOF_MARGIN:
            return (
                f"floor error_rate: at least {least:.6g} on the full set ({n_errors} errored "
                f"runs in {n} cases) > {cap}",
                least - cap,
            )
    for name, delta in ctx.spec.guardrails.accepted_deltas.model_dump().items():
        if delta is None:
            continue
        low, high = hard_bounds(per_case[name].to_numpy(dtype=float), n_total, name)
        if DIRECTIONS[EvaluatorName(name)] == "maximize":
            worse = baseline[name] - high
        else:
            worse = low - baseline[name]
        if worse - delta > PROOF_MARGIN:
            return (
                f"accepted delta {name}: regresses by at least {worse:.6g} (> {delta}) from "
                f"the baseline even if every unseen case scores its best ({n} cases run)",
                worse - delta,
            )
    return None


def _within_score_bounds(per_case: pd.DataFrame) -> bool:
    """Every score inside its evaluator's range (`racing.bounds.SCORE_BOUNDS`); what the best
    unseen case can score is only known when the seen ones keep to that range."""
    for name in per_case.columns:
        low, high = SCORE_BOUNDS.get(name, (-math.inf, math.inf))
        x = per_case[name].to_numpy(dtype=float)
        if not ((x >= low) & (x <= high)).all():
            return False
    return True
