"""One trial: run the harness on the search set, score it, constrain it, record it.

Policy and Safety are floors set with `trial.set_constraint` (feasible when <= 0), never
returned as objectives. Accepted deltas from the baseline are constraints too. Everything a
reviewer needs to judge the trial later (scores, diff, case hashes) goes in user attributes so
the study reads on its own in optuna-dashboard.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

import optuna

from contextos_lab.autotune.context import RunContext
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Short case-hash prefix stored per trial (the full hashes are in the study's attributes).
CASE_HASH_CHARS = 16
#: Above this many cases a trial stores the digest only; the study holds the full hash list.
MAX_CASE_HASHES_PER_TRIAL = 256


class HarnessFailure(RuntimeError):
    """The harness (or evaluation) could not produce scores for a config; `spend` is what the
    attempt still paid (calls made before it failed), when known."""

    spend: dict[str, Any] | None = None


def worker_id() -> str:
    """`host:pid`: lets a restarted sweep tell a dead worker's trial from a live one."""
    return f"{socket.gethostname()}:{os.getpid()}"


def score_config(ctx: RunContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """Mean of each evaluator over the search set (repeats averaged per case first), plus the
    error count and rate, harness wall time, what the trial paid and its pass^k summary."""
    from contextos_lab.autotune.budget import economics_cents, trial_spend
    from contextos_lab.harness.execution import execute
    from contextos_lab.harness.repeat_scores import score_execution

    config = ctx.space.config(params)
    spec = ctx.spec
    try:
        execution = execute(
            ctx.harness,
            ctx.search.cases,
            ctx.search.case_hashes,
            config,
            spec.execution_policy().model_copy(update={"cache": ctx.read_cache}),
            ctx.cache,
        )
    except Exception as exc:
        raise HarnessFailure(
            f"harness {ctx.harness.name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    results = execution.results
    errors = results["error"][results["error"].notna() & (results["error"].astype(str) != "")]
    if len(results) and len(errors) == len(results):
        failure = HarnessFailure(f"every case errored; first: {errors.iloc[0]}")
        failure.spend = trial_spend(execution, spec.prices)
        raise failure
    prices = spec.prices
    try:
        scored = score_execution(
            ctx.evaluate,
            ctx.search.cases,
            execution,
            economics=(lambda r: economics_cents(prices, r)) if prices is not None else None,
        )
    except Exception as exc:
        raise HarnessFailure(
            f"evaluation ({spec.evaluate}) raised {type(exc).__name__}: {exc}; do the cases "
            "carry the fields this evaluator reads? (simple cases: "
            "contextos_lab.evaluators.assertions:evaluate)"
        ) from exc
    scores = scored.means
    if any(v != v for v in scores.values()):
        raise HarnessFailure(f"evaluation produced NaN scores {scores}")
    return {
        "scores": scores,
        "n_case_errors": len(errors),
        "error_rate": scored.error_rate,
        "harness_s": execution.wall_s,
        "spend": trial_spend(execution, prices),
        "repeats": scored.summary(),
    }


def constraint_values(
    ctx: RunContext,
    scores: Mapping[str, float],
    baseline: Mapping[str, float] | None,
    error_rate: float | None = None,
) -> dict[str, float]:
    """Named constraint values, feasible when <= 0: floors, then accepted regressions."""
    floors = ctx.spec.guardrails.floors
    out = {f"floor_{name}": floor - scores[name] for name, floor in floors.model_dump().items()}
    if ctx.spec.max_error_rate is not None and error_rate is not None:
        out["floor_error_rate"] = error_rate - ctx.spec.max_error_rate
    if baseline is None:
        return out
    for name, delta in ctx.spec.guardrails.accepted_deltas.model_dump().items():
        if delta is None:
            continue
        worse = baseline[name] - scores[name]
        if DIRECTIONS[EvaluatorName(name)] == "minimize":
            worse = -worse
        out[f"delta_{name}"] = worse - delta
    return out


def search_set_attr(ctx: RunContext) -> dict[str, Any]:
    """Which cases a trial ran on: manifest hash, digest of the sorted case hashes, and the
    (short) hashes themselves when the set is small enough to repeat on every trial."""
    attr: dict[str, Any] = {
        "manifest_hash": ctx.search.manifest_hash,
        "digest": ctx.search.digest,
        "n_cases": len(ctx.search),
    }
    if len(ctx.search) <= MAX_CASE_HASHES_PER_TRIAL:
        attr["case_hashes"] = [h[:CASE_HASH_CHARS] for h in ctx.search.case_hashes]
    else:
        attr["case_hashes_in"] = "study user attr search_set_case_hashes"
    return attr


def run_trial(
    ctx: RunContext, trial: optuna.Trial, baseline: Mapping[str, float] | None
) -> tuple[float, ...]:
    """Score one trial and record it. Raises HarnessFailure (after recording the reason)."""
    params = ctx.space.suggest(trial)
    # Few, grouped attributes: each one is a storage round trip (a commit on SQLite).
    trial.set_user_attr(
        "change", {"diff": ctx.space.diff(params), **ctx.space.change_summary(params)}
    )
    trial.set_user_attr("search_set", search_set_attr(ctx))
    try:
        outcome = score_config(ctx, params)
    except HarnessFailure as exc:
        trial.set_user_attr("fail_reason", str(exc))
        if exc.spend is not None:
            trial.set_user_attr("spend", exc.spend)
        raise
    scores = outcome["scores"]
    trial.set_user_attr("scores", scores)
    trial.set_user_attr(
        "run",
        {
            "n_case_errors": outcome["n_case_errors"],
            "error_rate": round(outcome["error_rate"], 6),
            "harness_s": round(outcome["harness_s"], 6),
            **outcome["repeats"],
        },
    )
    trial.set_user_attr("spend", outcome["spend"])
    # Only the baseline trial runs before baseline scores exist; it is its own reference.
    constraints = constraint_values(
        ctx, scores, baseline if baseline is not None else scores, outcome["error_rate"]
    )
    for name, value in constraints.items():
        trial.set_constraint(name, value)
    return tuple(scores[e.value] for e in ctx.spec.objectives)
