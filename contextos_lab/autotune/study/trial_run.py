"""One trial's path: ask, check the budget, run on the harness, tell, write to the run layout."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import optuna
from optuna.trial import TrialState

from contextos_lab.autotune import objective
from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.objective import ScoringFailure
from contextos_lab.autotune.racing.racing import race
from contextos_lab.autotune.spend_guard import SpendGuard
from contextos_lab.autotune.study import trial_attrs
from contextos_lab.autotune.study.trial_claim import ask_claimed
from contextos_lab.autotune.study.trial_count import _within_budget
from contextos_lab.autotune.tiers.pick import enqueue_pick
from contextos_lab.autotune.tiers.screen import screen_step
from contextos_lab.errors import ContextosError

log = logging.getLogger(__name__)

#: A failed trial's exit status (`errors`), beside its `fail_reason`: what the baseline's
#: failure exits with is read from this typed value, in any process, never from the reason.
FAIL_CODE = "fail_code"


def run_one_trial(
    ctx: RunContext,
    study: optuna.Study,
    baseline: dict[str, float] | None,
    *,
    budget: int | None = None,
    trial: optuna.Trial | None = None,
) -> optuna.trial.FrozenTrial | None:
    """Ask (unless given) and run one trial; None when it fell past the budget (closed
    unrun as an uncounted FAIL, because a concurrent process took the last place)."""
    if ctx.runs is not None:
        ctx.runs.discard()
    if trial is None:
        enqueue_pick(ctx, study, baseline)  # tiers, surrogate steer: what the target runs next
        trial = ask_claimed(study)
        while baseline is not None and trial.user_attrs.get("is_baseline"):
            # a baseline a concurrent process enqueued too and nobody took before the real
            # one finished: running it would put a second baseline on the front
            close_duplicate_baseline(study, trial)
            trial = ask_claimed(study)
    if budget is not None and not _within_budget(study, trial.number, budget):
        trial.set_user_attr("over_budget", True)
        trial.set_user_attr("fail_reason", f"over budget: the study already has {budget} trials")
        study.tell(trial, state=TrialState.FAIL)
        return None
    try:
        values = run_trial(ctx, trial, baseline)
    except ScoringFailure as exc:
        log.warning("trial %d failed: %s", trial.number, exc)
        return _laid_out(ctx, study.tell(trial, state=TrialState.FAIL))
    except optuna.TrialPruned:  # dropped by racing; its stage and reason are in user attrs
        return _laid_out(ctx, study.tell(trial, state=TrialState.PRUNED))
    except BaseException as exc:  # a bug or an interrupt: record it, never swallow it
        interrupted = isinstance(exc, KeyboardInterrupt | SystemExit)
        trial.set_user_attr("interrupted", interrupted)
        trial.set_user_attr("fail_reason", f"{type(exc).__name__}: {exc}")
        if isinstance(exc, ContextosError):
            trial.set_user_attr(FAIL_CODE, exc.code)
        study.tell(trial, state=TrialState.FAIL)
        raise
    return _laid_out(ctx, study.tell(trial, list(values)))


def close_duplicate_baseline(study: optuna.Study, trial: optuna.Trial) -> None:
    """Close a second baseline trial unrun and uncounted (two processes both enqueued one)."""
    trial.set_user_attr("duplicate_baseline", True)
    trial.set_user_attr("fail_reason", "duplicate baseline: another process runs it")
    study.tell(trial, state=TrialState.FAIL)


def _laid_out(ctx: RunContext, frozen: optuna.trial.FrozenTrial) -> optuna.trial.FrozenTrial:
    """Write the told trial to the run layout; a full disk there never fails the study."""
    if ctx.runs is not None:
        try:
            ctx.runs.finish(frozen, config=ctx.space.config(dict(frozen.params)))
        except OSError as exc:
            log.warning("run layout: trial %d not written: %s", frozen.number, exc)
    return frozen


def _guard(
    ctx: RunContext, trial: optuna.Trial, baseline: Mapping[str, float] | None
) -> SpendGuard | None:
    """The budget's guard for this trial; none for the baseline (the reference every other
    trial needs) or without a calls or money budget."""
    budget = ctx.spec.budget
    if baseline is None or budget is None or (budget.calls is None and budget.usd is None):
        return None
    return SpendGuard(trial, budget, ctx.meter, len(ctx.search) * ctx.spec.repeats)


def run_trial(
    ctx: RunContext, trial: optuna.Trial, baseline: Mapping[str, float] | None
) -> tuple[float, ...]:
    """Score one trial and record it. Raises ScoringFailure (after recording the reason)."""
    params = ctx.space.suggest(trial)
    # Few, grouped attributes, one commit per group (autotune.study.trial_attrs): each write is a
    # storage round trip, and on a server database round trips are the kit's per-trial cost.
    trial_attrs.record(
        trial,
        {
            "change": {"diff": ctx.space.diff(params), **ctx.space.change_summary(params)},
            "search_set": objective.search_set_attr(ctx),
        },
    )
    ctx.meter.reset()
    ctx.spend_guard = _guard(ctx, trial, baseline)
    try:
        screen_step(ctx, trial, params, baseline)  # tiers: optuna.TrialPruned when screened out
        if ctx.spec.fidelity == "racing":
            outcome = race(ctx, trial, params, baseline)  # optuna.TrialPruned when dropped
        else:
            outcome = (ctx.score_config or objective.score_config)(ctx, params)
    except ScoringFailure as exc:
        # what the failed attempt paid, and why it failed
        reason = {"fail_reason": str(exc), FAIL_CODE: exc.code, "spend": ctx.meter.as_dict()}
        trial_attrs.record(trial, reason)
        raise
    except optuna.TrialPruned:
        trial.set_user_attr("spend", ctx.meter.as_dict())
        raise
    scores = outcome["scores"]
    error_rate = outcome.get("error_rate", ctx.meter.error_rate)
    run = {
        "n_case_errors": outcome["n_case_errors"],
        "error_rate": round(error_rate, 6),
        "harness_s": round(outcome["harness_s"], 6),
        **outcome.get("repeats", {}),
    }
    # Only the baseline trial runs before baseline scores exist; it is its own reference.
    constraints = objective.constraint_values(
        ctx, scores, baseline if baseline is not None else scores, error_rate
    )
    trial_attrs.record(
        trial, {"scores": scores, "run": run, "spend": ctx.meter.as_dict()}, constraints
    )
    return tuple(scores[e.value] for e in ctx.spec.objectives)
