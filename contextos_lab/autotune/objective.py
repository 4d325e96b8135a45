"""One trial: run the harness on the search set, score it, constrain it, record it.

Policy and Safety are floors set with `trial.set_constraint` (feasible when <= 0), never
returned as objectives. Accepted deltas from the baseline are constraints too. Everything a
reviewer needs to judge the trial later (scores, diff, case hashes) goes in user attributes so
the study reads on its own in optuna-dashboard.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import Any

import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.harness.protocol import run_cases
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Short case-hash prefix stored per trial (the full hashes are in the study's attributes).
CASE_HASH_CHARS = 16
#: Above this many cases a trial stores the digest only; the study holds the full hash list.
MAX_CASE_HASHES_PER_TRIAL = 256


class HarnessFailure(RuntimeError):
    """The harness (or evaluation) could not produce scores for a config."""


def worker_id() -> str:
    """`host:pid`: lets a restarted sweep tell a dead worker's trial from a live one."""
    return f"{socket.gethostname()}:{os.getpid()}"


def evaluate_cases(
    ctx: RunContext, cases: pd.DataFrame, config: Mapping[str, Any]
) -> tuple[pd.DataFrame, int, float]:
    """Per-case evaluator scores of `config` on `cases` (rows in the cases' order), the number
    of cases that errored, and the harness wall time. Racing stages call it on subsets."""
    t0 = time.perf_counter()
    try:
        results = run_cases(ctx.harness, cases, config)
    except Exception as exc:
        raise HarnessFailure(
            f"harness {ctx.harness.name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    harness_s = time.perf_counter() - t0
    errors = results["error"].dropna() if "error" in results else pd.Series(dtype=object)
    errors = errors[errors.astype(str) != ""]
    if len(results) and len(errors) == len(results):
        raise HarnessFailure(f"every case errored; first: {errors.iloc[0]}")
    try:
        frame = ctx.evaluate(cases, results)
    except Exception as exc:
        raise HarnessFailure(f"evaluation raised {type(exc).__name__}: {exc}") from exc
    missing = [e.value for e in EvaluatorName if e.value not in frame.columns]
    if missing:
        raise HarnessFailure(f"evaluation frame lacks evaluator columns {missing}")
    if len(frame) != len(cases):
        raise HarnessFailure(f"evaluation returned {len(frame)} rows for {len(cases)} cases")
    per_case = frame[[e.value for e in EvaluatorName]].astype(float)
    return per_case, len(errors), harness_s


def score_config(ctx: RunContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """Mean of each evaluator over the search set, plus error count and harness wall time."""
    per_case, n_errors, harness_s = evaluate_cases(ctx, ctx.search.cases, ctx.space.config(params))
    scores = {name: float(per_case[name].mean()) for name in per_case.columns}
    if any(v != v for v in scores.values()):
        raise HarnessFailure(f"evaluation produced NaN scores {scores}")
    return {"scores": scores, "n_case_errors": n_errors, "harness_s": harness_s}


def constraint_values(
    ctx: RunContext, scores: Mapping[str, float], baseline: Mapping[str, float] | None
) -> dict[str, float]:
    """Named constraint values, feasible when <= 0: floors, then accepted regressions."""
    floors = ctx.spec.guardrails.floors
    out = {f"floor_{name}": floor - scores[name] for name, floor in floors.model_dump().items()}
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
        attr["case_hashes_in"] = "study artifact search_set_case_hashes.json (autotune.artifacts)"
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
        if baseline is not None and ctx.spec.fidelity == "racing":
            from contextos_lab.autotune.racing import race  # racing builds on this module

            outcome = race(ctx, trial, params, baseline)  # optuna.TrialPruned when dropped
        else:
            outcome = score_config(ctx, params)
    except HarnessFailure as exc:
        trial.set_user_attr("fail_reason", str(exc))
        raise
    scores = outcome["scores"]
    trial.set_user_attr("scores", scores)
    trial.set_user_attr(
        "run",
        {"n_case_errors": outcome["n_case_errors"], "harness_s": round(outcome["harness_s"], 6)},
    )
    # Only the baseline trial runs before baseline scores exist; it is its own reference.
    constraints = constraint_values(ctx, scores, baseline if baseline is not None else scores)
    for name, value in constraints.items():
        trial.set_constraint(name, value)
    return tuple(scores[e.value] for e in ctx.spec.objectives)
