"""One trial: run the harness on the search set, score it, constrain it, record it.

Policy and Safety are floors set with `trial.set_constraint` (feasible when <= 0), never
returned as objectives. Accepted deltas from the baseline are constraints too. Everything a
reviewer needs to judge the trial later (scores, diff, case hashes) goes in user attributes so
the study reads on its own in optuna-dashboard.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, NamedTuple

import pandas as pd

from contextos_lab.autotune.budget import economics_cents
from contextos_lab.autotune.cases import case_hash
from contextos_lab.autotune.context import RunContext
from contextos_lab.errors import EXIT_HARNESS, EXIT_PROTOCOL, ContextosError
from contextos_lab.harness.execution import Execution, error_mask, execute
from contextos_lab.harness.protocol import Fault, fault_of
from contextos_lab.harness.repeat_scores import MAY_BE_UNSCORED, RepeatScores, score_execution
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName

#: Short case-hash prefix stored per trial (the full hashes are in the study's attributes).
CASE_HASH_CHARS = 16
#: Above this many cases a trial stores the digest only; the study holds the full hash list.
MAX_CASE_HASHES_PER_TRIAL = 256


class RunError(NamedTuple):
    """An errored run's reason (for the reader) and its typed fault (for decisions)."""

    reason: str
    fault: Fault | None = None


class ScoringFailure(ContextosError, RuntimeError):
    """The harness (or evaluation) could not produce scores for a config. (Not the external
    harness's own `harness.subprocess_harness.HarnessFailure`, which it may wrap.) `code` is
    EXIT_PROTOCOL when the harness broke the protocol (`errored`), else EXIT_HARNESS."""

    exit_code = EXIT_HARNESS

    @classmethod
    def errored(cls, first: RunError | None) -> ScoringFailure:
        """Every run errored; the first run's typed `fault` (never its reason's words) says
        whether it was a protocol fault."""
        code = EXIT_PROTOCOL if first is not None and first.fault is Fault.protocol else None
        reason = first.reason if first is not None else None
        return cls(f"every case errored; first: {reason}", code=code)


def execute_and_score(
    ctx: RunContext,
    cases: pd.DataFrame,
    config: Mapping[str, Any],
    *,
    all_errored_fails: bool = True,
) -> tuple[RepeatScores, Execution]:
    """Run `config` on `cases` through the execution layer (concurrency, per-case deadlines,
    repeats, the result cache) and score it per case; what it paid goes on `ctx.meter`.
    A batch whose every run errored raises ScoringFailure unless `all_errored_fails` is False
    (a racing round: racing judges that per stage)."""
    hashes = _case_hashes(ctx, cases)
    policy = ctx.spec.execution_policy().model_copy(update={"cache": ctx.read_cache})
    if ctx.spend_guard is not None:  # worst case: every run of every case paid
        ctx.spend_guard(len(cases) * policy.repeats)
    try:
        execution = execute(ctx.harness, cases, hashes, config, policy, ctx.cache)
    except Exception as exc:
        code = exc.code if isinstance(exc, ContextosError) and exc.code == EXIT_PROTOCOL else None
        raise ScoringFailure(
            f"harness {ctx.harness.name!r} raised {type(exc).__name__}: {exc}", code=code
        ) from exc
    prices = ctx.spec.prices
    ctx.meter.add(execution, prices)
    every_run_errored = len(execution.results) and execution.n_errors == len(execution.results)
    if all_errored_fails and every_run_errored:
        raise ScoringFailure.errored(first_error(execution, results_source(ctx)))
    try:
        scored = score_execution(
            ctx.evaluate,
            cases,
            execution,
            economics=(lambda r: economics_cents(prices, r)) if prices is not None else None,
        )
    except Exception as exc:
        raise ScoringFailure(
            f"evaluation ({ctx.spec.evaluate}) raised {type(exc).__name__}: {exc}; do the "
            "cases carry the fields this evaluator reads? (simple cases: "
            "contextos_lab.evaluators.assertions:evaluate)"
        ) from exc
    if len(scored.per_case) != len(cases):
        raise ScoringFailure(f"evaluation returned {len(scored.per_case)} rows for {len(cases)}")
    if ctx.runs is not None:  # the experience layout outside proposers read (search set only)
        ctx.runs.record(cases, execution.results, scored.per_case)
    return scored, execution


def _case_hashes(ctx: RunContext, cases: pd.DataFrame) -> list[str]:
    if cases is ctx.search.cases:
        return list(ctx.search.case_hashes)
    by_id = ctx.search.id_to_hash()
    ids = [str(c) for c in cases["case_id"]]
    if all(by_id.get(i) for i in ids):  # a racing stage: a subset of the search set
        return [by_id[i] for i in ids]
    return [
        by_id.get(i) or case_hash(row)
        for i, row in zip(ids, cases.to_dict(orient="records"), strict=True)
    ]


def results_source(ctx: RunContext) -> str:
    """Where a results row came from, for an error about it: the harness's file and spec path."""
    try:
        file = inspect.getsourcefile(type(ctx.harness)) or "<unknown file>"
    except TypeError:  # a built-in type has no file
        file = "<unknown file>"
    return f"{file} (harness {ctx.spec.harness})"


def first_error(execution: Execution, source: str = "the harness") -> RunError | None:
    """The first errored run (None when nothing errored); a `fault` the kit does not know
    raises `UnknownFault` naming `source`, the case and its repeat."""
    results = execution.results
    errored = error_mask(results).to_numpy()
    if not errored.any():
        return None
    first = int(errored.argmax())
    row = results.iloc[first]
    where = f"{source}: case {row['case_id']!r}, repeat {row.get('repeat', 0)}"
    fault = fault_of(row["fault"], where) if "fault" in results else None
    return RunError(str(row["error"]), fault)


class Evaluated(NamedTuple):
    """A racing round: per-case scores, errored runs (and the first one's reason), wall time."""

    scored: RepeatScores
    n_errors: int
    wall_s: float
    first_error: RunError | None


def evaluate_cases(ctx: RunContext, cases: pd.DataFrame, config: Mapping[str, Any]) -> Evaluated:
    """`config` scored on `cases` (per case in the cases' order: repeats averaged, errored
    runs failed). Racing runs it on each round of a stage and judges "every case errored"
    over the whole stage, so a round whose few cases all errored does not fail the trial.
    Such a round is scored like any other (the evaluator sees its error rows, as it does for a
    partly errored batch) and written to the run layout before the stage's verdict."""
    scored, execution = execute_and_score(ctx, cases, config, all_errored_fails=False)
    first = first_error(execution, results_source(ctx))
    return Evaluated(scored, execution.n_errors, execution.wall_s, first)


def score_config(ctx: RunContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """Mean of each evaluator over the search set (repeats averaged per case first), plus the
    error count and rate, harness wall time and the pass^k summary (spend: `ctx.meter`)."""
    scored, execution = execute_and_score(ctx, ctx.search.cases, ctx.space.config(params))
    scores = scored.means
    check_scores(scores)
    return {
        "scores": scores,
        "n_case_errors": execution.n_errors,
        "error_rate": scored.error_rate,
        "harness_s": execution.wall_s,
        "repeats": scored.summary(),
    }


def check_scores(scores: Mapping[str, float]) -> None:
    """A NaN mean is a harness or evaluator failure, except on a metric the evaluator may leave
    unscored (policy: every case's intent without a rule), which stays NaN = not scored."""
    if any(v != v for k, v in scores.items() if k not in MAY_BE_UNSCORED):
        raise ScoringFailure(f"evaluation produced NaN scores {dict(scores)}")


def constraint_values(
    ctx: RunContext,
    scores: Mapping[str, float],
    baseline: Mapping[str, float] | None,
    error_rate: float | None = None,
) -> dict[str, float]:
    """Named constraint values, feasible when <= 0: floors, then accepted regressions.

    A floor binds the cases its metric scored (their mean). A trial whose every case is unscored
    on it (policy, with no rule for any intent in the set) has nothing for the floor to bound:
    its constraint is 0 (at the floor, feasible) and the trial's score stays NaN, which
    `front.json`, the reports and the gate show as "not scored", never as 1.0 or as a breach."""
    floors = ctx.spec.guardrails.floors
    out = {
        f"floor_{name}": 0.0 if scores[name] != scores[name] else floor - scores[name]
        for name, floor in floors.model_dump().items()
    }
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
        attr["case_hashes_in"] = (
            "study artifact search_set_case_hashes.json (autotune.study.artifacts)"
        )
    return attr
