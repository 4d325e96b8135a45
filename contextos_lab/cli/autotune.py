"""`contextos-lab search SPEC --out DIR`: run the autotune study without a notebook."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from contextos_lab.cli.conventions import (
    add_command,
    add_progress_flag,
    positive_int,
    show_progress,
)
from contextos_lab.errors import (
    EXIT_HARNESS,
    EXIT_MISMATCH,
    EXIT_PROTOCOL,
    EXIT_STORAGE,
    EXIT_USAGE,
    one_line,
)
from contextos_lab.harness.cache_flags import add_no_cache_flag

if TYPE_CHECKING:
    from contextos_lab.autotune.context import RunContext

#: Exit codes (table in `contextos_lab.errors`): a scheduler can tell a bad spec from an
#: unreachable dependency.
EXIT_SPEC = EXIT_USAGE
#: Where the stderr tail of the failed call is (the one-line reason quotes its error line).
TAIL_HINT = " (its stderr: contextos-lab runs tail)"
__all__ = [
    "EXIT_HARNESS",
    "EXIT_MISMATCH",
    "EXIT_PROTOCOL",
    "EXIT_SPEC",
    "EXIT_STORAGE",
    "register",
    "run",
]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "search",
        example=[
            "contextos-lab search my_run.yaml --out out/search",
            "contextos-lab search my_run.yaml --out out/search --n-trials 60 --workers 2",
        ],
        description=(
            "Run or resume the Optuna study a run spec declares. Storage: default "
            "sqlite:///DIR/study.db; any Optuna RDB URL (postgresql://...); a journal file "
            "(journal:///abs/path.log or a path ending .log); or 'memory'."
        ),
    )
    p.add_argument("spec", help="run spec (YAML or JSON)")
    p.add_argument("--out", required=True, help="output folder (front.json, default study.db)")
    p.add_argument(
        "--n-trials", type=positive_int, default=None, help="budget incl. baseline trial"
    )
    p.add_argument("--storage", default=None, help="Optuna storage URL or journal path")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes on one study")
    p.add_argument("--sampler", choices=["tpe", "nsgaii", "gp", "random", "optuna_default"])
    p.add_argument("--seed", type=int, default=None)
    p.add_argument(
        "--fidelity",
        choices=["full", "racing"],
        default=None,
        help="override the spec's fidelity (default: the spec's, racing unless it says full)",
    )
    add_no_cache_flag(p)
    add_progress_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Optuna, pandas and the harness load here, when the search runs, not for `search --help`
    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import load_spec
    from contextos_lab.autotune.study.baseline import HarnessProtocolError, HarnessUnreachable
    from contextos_lab.autotune.sweep import sweep, write_front_json

    try:
        ctx = prepare(load_spec(args.spec))
        for warning in policy_warnings(ctx):
            print(warning, file=sys.stderr)
        result = sweep(
            ctx.spec,
            ctx=ctx,
            out_dir=args.out,
            n_trials=args.n_trials,
            storage=args.storage,
            workers=args.workers,
            sampler=args.sampler,
            seed=args.seed,
            fidelity=args.fidelity,
            progress=show_progress(args),
        )
    except HarnessUnreachable as exc:  # 4; 9 for a protocol error (a retry gets the same)
        # the other kit errors (a bad spec, storage, a study's other spec) are one line and
        # their class's exit status in `cli.app.main`; these add where to look next
        kind = "protocol error" if isinstance(exc, HarnessProtocolError) else "unreachable"
        print(f"error: harness {kind}: {one_line(exc)}{TAIL_HINT}", file=sys.stderr)
        return exc.code
    path = write_front_json(result, args.out)
    rep = result.report
    print(
        f"{rep['trials']['total']} trials, {rep['n_feasible']} feasible, "
        f"{len(rep['candidates'])} on the front, hypervolume {result.hypervolume:.4f} -> {path}"
    )
    spend = rep.get("spend") or {}
    if spend.get("trials"):
        print(
            f"spend: {spend['calls']} harness calls ({spend['cache_hits']} from the cache), "
            f"${spend['usd']:.4f}, {spend['wall_s']:.1f}s"
            + (f"; stopped early: {spend['budget_stop']}" if spend.get("budget_stop") else "")
        )
    if rep.get("tiers"):  # spec tiers: agreement, decisions and spend per tier (docs/tiers.md)
        from contextos_lab.autotune.tiers.report import format_tier_report

        print(format_tier_report(rep["tiers"]))
    for c in rep["candidates"][:5]:
        print(
            f"  #{c['rank']} trial {c['number']}: gain {c['target_gain']:+.4g} "
            f"({rep['target']['metric']}), {c['n_changed']} change(s), diff {c['config_diff']}"
            + _cost_line(c)
        )
    return 0


def _cost_line(candidate: dict[str, object]) -> str:
    """Latency and cost are over answered runs: the error rate belongs beside them."""
    rate = candidate.get("error_rate")
    if not isinstance(rate, (int, float)):
        return ""
    parts = [
        f"{name} {candidate[name]:.4g}"
        for name in ("latency", "economics")
        if isinstance(candidate.get(name), (int, float))
    ]
    return f"; {', '.join(parts)} over answered runs, error rate {rate:.2%}"


def policy_warnings(ctx: RunContext) -> list[str]:
    """Search-set intents the policy evaluator has no rule for (it would pass them silently);
    only when the spec scores with the default evaluator, whose policy reads those rules."""
    from contextos_lab.domain.active import active_project
    from contextos_lab.evaluators.policy_coverage import unruled_intents, unruled_warning
    from contextos_lab.evaluators.registry import get_evaluate

    cases = ctx.search.cases
    # the function itself, however the spec named it (`scorecard` or its module path)
    default = get_evaluate(ctx.spec.evaluate) is get_evaluate("scorecard")
    if not default or "intent" not in cases.columns:
        return []
    unruled = unruled_intents(cases["intent"].dropna(), active_project().policy_evaluation)
    return [unruled_warning(unruled, f"search set {ctx.spec.search_set}")] if unruled else []
