"""One config on the screen tier: racing's first `screen_cases` cases, scored as the target
scores them, with the spend it took (shared by the screen step and the surrogate's pool)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.objective import evaluate_cases
from contextos_lab.autotune.racing.order import racing_order
from contextos_lab.autotune.racing.racing import fill_unmeasured


def screen_config(ctx: RunContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run one config on the screen tier (racing's first cases): its scores and spend."""
    tiers, screen = ctx.spec.tiers, ctx.screen
    assert tiers is not None and screen is not None
    screen.cache, screen.read_cache, screen.spend_guard = ctx.cache, ctx.read_cache, ctx.spend_guard
    rows = racing_order(ctx)[: tiers.n_screen_cases(len(ctx.search))]
    calls, usd = ctx.meter.calls, ctx.meter.usd
    got = evaluate_cases(screen, ctx.search.cases.iloc[rows], ctx.space.config(params))
    per_case = fill_unmeasured(got.scored.per_case)
    return {
        "scores": {c: round(float(per_case[c].mean()), 9) for c in per_case.columns},
        "cases": len(rows),
        "calls": ctx.meter.calls - calls,
        "usd": round(ctx.meter.usd - usd, 8),
        "n_case_errors": got.n_errors,
    }
