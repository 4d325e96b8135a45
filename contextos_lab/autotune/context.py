"""A checked spec bound to live objects: the harness, its search space, the search set and the
evaluation function. Built once per process (each worker rebuilds its own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.autotune.budget import SpendMeter
from contextos_lab.autotune.cases import CaseSet, load_case_set, scope_to_intent
from contextos_lab.autotune.spec.check import check_spec
from contextos_lab.autotune.spec.load import SpecError
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.spec.search_space import SearchSpace
from contextos_lab.evaluators.registry import EvaluateFn, get_evaluate
from contextos_lab.harness.base import as_base_harness
from contextos_lab.harness.case_inputs import declared_inputs
from contextos_lab.harness.protocol import Harness, baseline_config, load_harness
from contextos_lab.harness.result_cache import ResultCache, cache_reads_enabled
from contextos_lab.harness.user_modules import add_spec_dir, with_spec_cwd

if TYPE_CHECKING:
    from contextos_lab.autotune.run_layout import RunLayout


@dataclass
class RunContext:
    spec: TuningRunSpec
    harness: Harness
    space: SearchSpace
    search: CaseSet
    evaluate: EvaluateFn
    #: Results already paid for (harness.result_cache); None runs every case afresh.
    cache: ResultCache | None = None
    #: False (`--no-cache`): run every case afresh, still storing what it returns.
    read_cache: bool = field(default_factory=cache_reads_enabled)
    #: What the running trial has paid so far (autotune.budget).
    meter: SpendMeter = field(default_factory=SpendMeter)
    #: Where search-set runs are written for outside proposers (`run_layout`); None: nowhere.
    runs: RunLayout | None = None
    #: Scores a config on the full search set in place of `objective.score_config` (same
    #: arguments, same outcome dict): the extension point a benchmark uses to read scores from an
    #: enumerated grid. In-process only: a worker process rebuilds its context without it.
    score_config: Callable[[RunContext, Mapping[str, Any]], dict[str, Any]] | None = None
    #: Called with a batch's worst-case call count before it runs (`autotune.spend_guard`);
    #: raises to stop the trial there. Set per trial; None: no budget to keep.
    spend_guard: Callable[[int], None] | None = None
    #: The screen tier's context (spec `tiers`, autotune.tiers): its harness and prices, this
    #: context's cases, space, evaluator, cache and meter. None: a spec without tiers.
    screen: RunContext | None = None

    def worker_payload(self) -> dict[str, Any]:
        """Picklable: a worker re-imports the harness and evaluator by path, reuses the cases."""
        cache_url = self.cache.url if self.cache is not None else None
        return {
            **self.spec.runtime_dict(),
            "search": self.search,
            "cache_url": cache_url,
            "read_cache": self.read_cache,
            "runs": str(self.runs.root) if self.runs is not None else None,
        }


def prepare(
    spec: TuningRunSpec,
    *,
    harness: Harness | None = None,
    evaluate: EvaluateFn | None = None,
    search: CaseSet | None = None,
    set_checker: Callable[[Path, Path], list[str]] | None = None,
) -> RunContext:
    """Check the spec against the harness and the sets, then load what a trial needs.

    Raises SpecError listing every problem, naming the spec's file; nothing has run yet.
    """
    try:
        return _prepare(spec, harness, evaluate, search, set_checker)
    except SpecError as exc:
        raise SpecError(exc.problems, source=spec.source) from exc


def _prepare(
    spec: TuningRunSpec,
    harness: Harness | None,
    evaluate: EvaluateFn | None,
    search: CaseSet | None,
    set_checker: Callable[[Path, Path], list[str]] | None,
) -> RunContext:
    spec, harness, surfaces = check_spec(spec, harness=harness, set_checker=set_checker)
    problems: list[str] = []
    if evaluate is None:
        add_spec_dir(spec.base_dir)  # `evaluate: my_module:fn` beside the spec
        try:
            evaluate = get_evaluate(spec.evaluate)
        except Exception as exc:
            problems.append(
                f"evaluate: cannot load {spec.evaluate!r} ({type(exc).__name__}: {exc})"
            )
    if search is None:
        try:
            search = scope_to_intent(
                load_case_set(spec.resolve(spec.search_set)), spec.target.intent
            )
        except Exception as exc:
            problems.append(f"search_set: cannot load ({type(exc).__name__}: {exc})")
    if search is not None and len(search) == 0:
        problems.append("search_set: no cases")
    if search is not None and spec.fidelity == "racing":
        missing = [c for c in spec.racing.stratify_by if c not in search.cases.columns]
        if missing:
            problems.append(f"racing.stratify_by: the search set has no columns {missing}")
    if problems:
        raise SpecError(problems)
    assert evaluate is not None and search is not None
    _declare_inputs(harness, spec)
    space = SearchSpace(surfaces=surfaces, base_config=baseline_config(harness))
    ctx = RunContext(spec=spec, harness=harness, space=space, search=search, evaluate=evaluate)
    ctx.screen = _screen_context(ctx)
    return ctx


def _screen_context(ctx: RunContext) -> RunContext | None:
    """The screen tier bound to live objects, sharing the target's cases, space, evaluator and
    meter (so the budget sees both tiers' spend); its harness answers as tier `screen` in the
    result cache (autotune.tiers.harness)."""
    from contextos_lab.harness.tier_harness import TierHarness

    tier = ctx.spec.screen_tier()
    if tier is None:
        return None
    path, kwargs, prices = tier
    try:
        inner = load_harness(path, **with_spec_cwd(path, kwargs, ctx.spec.base_dir))
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise SpecError([f"tiers.screen: cannot load harness {path!r} ({why})"]) from exc
    missing = sorted(set(ctx.space.names) - {s.name for s in inner.tunable_surfaces()})
    if missing:
        raise SpecError([f"tiers.screen: harness {path!r} has no tunable surfaces {missing}"])
    _declare_inputs(inner, ctx.spec)
    spec = ctx.spec.model_copy(
        update={"harness": path, "harness_kwargs": kwargs, "prices": prices, "tiers": None}
    )
    return RunContext(
        spec=spec,
        harness=TierHarness(inner, "screen", kwargs),
        space=ctx.space,
        search=ctx.search,
        evaluate=ctx.evaluate,
        meter=ctx.meter,
    )


def _declare_inputs(harness: Harness, spec: TuningRunSpec) -> None:
    """Give a program harness its allow-list of case fields (spec first, then the case
    format's `inputs.json`) unless it was built with one (`harness.case_inputs`); a harness
    in this process ignores it (`BaseHarness.declare_inputs`)."""
    fields = spec.input_fields
    if fields is None:
        try:
            fields = declared_inputs(spec.resolve(spec.search_set))
        except ValueError as exc:
            raise SpecError([f"search_set: {exc}"]) from exc
    if fields is not None:
        as_base_harness(harness).declare_inputs(fields)


def rebuild(payload: dict[str, Any]) -> RunContext:
    """A worker's context from `RunContext.worker_payload()` (sets are not re-read)."""
    spec = TuningRunSpec.model_validate(payload["spec"]).with_base_dir(Path(payload["base_dir"]))
    add_spec_dir(spec.base_dir)
    kwargs = with_spec_cwd(spec.harness, spec.harness_kwargs, spec.base_dir)
    harness = load_harness(spec.harness, **kwargs)
    ctx = prepare(spec, harness=harness, search=payload["search"], set_checker=lambda a, b: [])
    if payload.get("cache_url"):
        ctx.cache = ResultCache(payload["cache_url"])
    ctx.read_cache = bool(payload.get("read_cache", True))
    if payload.get("runs"):
        from contextos_lab.autotune.run_layout import for_context

        ctx.runs = for_context(ctx, payload["runs"])
    return ctx
