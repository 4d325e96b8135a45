"""`TuningRunSpec`: every field seed 001 requires before a run starts, checked across fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from contextos_lab.autotune.budget import Budget, Prices
from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.spec.fidelity import Fidelity, RacingSchedule
from contextos_lab.autotune.spec.parts import (
    DEFAULT_EVALUATE,
    OBJECTIVE_EVALUATORS,
    Guardrails,
    HypervolumeSpec,
    SurfaceSpec,
    TargetSpec,
)
from contextos_lab.autotune.spec.tiers import Tier, Tiers
from contextos_lab.harness.execution import ExecutionPolicy
from contextos_lab.schemas.error_budget import ErrorBudget
from contextos_lab.schemas.scorecard import DIRECTIONS, FLOOR_EVALUATORS, EvaluatorName
from contextos_lab.schemas.tuning import BaselineTuple, TuningTarget


class TuningRunSpec(BaseModel):
    """Everything seed 001 requires before a run starts, plus how to run it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$", description="study name")
    harness: str = Field(min_length=3, description="'package.module:factory'")
    harness_kwargs: dict[str, Any] = Field(default_factory=dict)
    evaluate: str = Field(
        default=DEFAULT_EVALUATE,
        description="(cases, results) -> frame: a name (scorecard, assertions, an installed "
        "plug-in's) or 'package.module:function' (evaluators.registry)",
    )
    target: TargetSpec
    guardrails: Guardrails
    baseline_tuple: BaselineTuple
    tunable_surfaces: tuple[str | SurfaceSpec, ...] = Field(min_length=1)
    search_set: str = Field(min_length=1)
    heldout_test_set: str = Field(min_length=1)
    rollback_target: str = Field(min_length=1)
    objectives: tuple[EvaluatorName, ...] = OBJECTIVE_EVALUATORS
    hypervolume: HypervolumeSpec
    sampler: SamplerConfig = Field(default_factory=SamplerConfig)
    n_trials: int = Field(default=100, ge=1)
    fidelity: Fidelity = Field(
        default="racing",
        description="racing (default; benchmarks/search_cost.py): growing stratified subsets, "
        "completed on the full search set only while the config can still reach the feasible "
        "front; full: every trial on the whole search set",
    )
    racing: RacingSchedule = Field(default_factory=RacingSchedule)
    gain_tolerance: float = Field(
        default=0.0, ge=0.0, description="target gains this close rank as equal (metric units)"
    )
    # How the harness is driven (contextos_lab.harness.execution, autotune.budget).
    max_concurrency: int | None = Field(default=None, ge=1, description="cases in flight")
    repeats: int = Field(default=1, ge=1, le=100, description="runs per case (noisy harness)")
    case_timeout_s: float | None = Field(default=None, gt=0, description="deadline per case")
    max_error_rate: float | None = Field(
        default=None, ge=0, le=1,
        description="a floor: a trial whose share of errored runs exceeds it is infeasible",
    )  # fmt: skip
    input_fields: tuple[str, ...] | None = Field(
        default=None,
        description="case fields a program harness may see (an allow-list; default: what the "
        "case format declared in the sets' inputs.json, harness.case_inputs)",
    )
    prices: Prices | None = None
    budget: Budget | None = None
    heldout_budget: ErrorBudget = Field(
        default_factory=ErrorBudget,
        description=(
            "error control across gates on one held-out set (LORD++; gate.heldout.error_budget)"
        ),
    )

    tiers: Tiers | None = Field(
        default=None,
        description="fidelity tiers {screen, target}: a cheap harness screens configs for the "
        "target one, as far as their measured agreement earns (docs/tiers.md); none: as today",
    )

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    #: The file the spec was read from (`load_spec`), named by every later refusal.
    _source: str = PrivateAttr(default="run spec")

    @model_validator(mode="before")
    @classmethod
    def _target_tier(cls, data: Any) -> Any:
        """The target tier is the spec's own harness: what it declares replaces `harness`,
        `prices` and merges over `harness_kwargs`, so everything else reads one place."""
        if not isinstance(data, dict) or not isinstance(data.get("tiers"), dict):
            return data
        target = data["tiers"].get("target")
        if not isinstance(target, dict):
            return data
        out = dict(data)
        if target.get("harness"):
            out["harness"] = target["harness"]
        if target.get("prices") is not None:
            out["prices"] = target["prices"]
        if target.get("harness_kwargs"):
            own = data.get("harness_kwargs") or {}
            out["harness_kwargs"] = {**own, **target["harness_kwargs"]}
        return out

    @model_validator(mode="after")
    def _consistent(self) -> TuningRunSpec:
        problems = _cross_field_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # -- derived views -------------------------------------------------------------------------

    @property
    def surface_specs(self) -> tuple[SurfaceSpec, ...]:
        return tuple(
            SurfaceSpec(name=s) if isinstance(s, str) else s for s in self.tunable_surfaces
        )

    @property
    def directions(self) -> list[str]:
        return [DIRECTIONS[e] for e in self.objectives]

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    def with_base_dir(self, base_dir: Path) -> TuningRunSpec:
        self._base_dir = base_dir
        return self

    @property
    def source(self) -> str:
        return self._source

    def with_source(self, source: str) -> TuningRunSpec:
        self._source = source
        return self

    def resolve(self, path: str) -> Path:
        """Relative set paths resolve against the spec's folder, then each parent folder in
        turn (so `specs/x.yaml` may say `search_set: search_sets`)."""
        p = Path(path)
        if p.is_absolute():
            return p
        for folder in (self._base_dir, *self._base_dir.parents):
            if (folder / p).exists():
                return (folder / p).resolve()
        return (self._base_dir / p).resolve()

    def execution_policy(self) -> ExecutionPolicy:
        return ExecutionPolicy(
            max_concurrency=self.max_concurrency,
            repeats=self.repeats,
            case_timeout_s=self.case_timeout_s,
        )

    def screen_tier(self) -> tuple[str, dict[str, Any], Prices | None] | None:
        """(harness, kwargs, prices) of the screen tier, spec values filled in; None: no tiers."""
        if self.tiers is None:
            return None
        tier: Tier = self.tiers.screen
        own = tier.harness is None or tier.harness == self.harness
        kwargs = dict(tier.harness_kwargs)
        if own:
            kwargs = {**self.harness_kwargs, **kwargs}
        return tier.harness or self.harness, kwargs, tier.prices or self.prices

    def tuning_target(self) -> TuningTarget:
        return TuningTarget(
            intent=self.target.intent,
            metric=self.target.metric.value,
            direction=self.target.direction,
            guardrails=self.guardrails.as_strings(),
        )

    def ideal(self, name: EvaluatorName) -> float:
        if name in self.hypervolume.ideal_point:
            return self.hypervolume.ideal_point[name]
        return 1.0 if DIRECTIONS[name] == "maximize" else 0.0

    def runtime_dict(self) -> dict[str, Any]:
        """What a worker process needs to rebuild this spec (JSON-safe, base dir included)."""
        return {"spec": self.model_dump(mode="json"), "base_dir": str(self._base_dir)}


def _cross_field_problems(spec: TuningRunSpec) -> list[str]:
    problems: list[str] = []
    if len(set(spec.objectives)) != len(spec.objectives):
        problems.append("objectives: duplicated evaluator")
    floors_in = [e.value for e in spec.objectives if e in FLOOR_EVALUATORS]
    if floors_in:
        problems.append(
            f"objectives: {floors_in} are floors (constraints via set_constraint), never objectives"
        )
    if spec.target.metric not in spec.objectives:
        problems.append(
            f"target.metric {spec.target.metric.value!r} is not among objectives "
            f"{[e.value for e in spec.objectives]}"
        )
    for e in spec.objectives:
        if e not in spec.hypervolume.reference_point:
            problems.append(f"hypervolume.reference_point: missing objective {e.value!r}")
            continue
        ref, ideal = spec.hypervolume.reference_point[e], spec.ideal(e)
        better = ideal > ref if DIRECTIONS[e] == "maximize" else ideal < ref
        if not better:
            problems.append(
                f"hypervolume: ideal {ideal} must be strictly better than reference {ref} "
                f"for {e.value} ({DIRECTIONS[e]})"
            )
    names = [s.name for s in spec.surface_specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"tunable_surfaces: listed more than once: {dupes}")
    if spec.search_set == spec.heldout_test_set:
        problems.append("search_set and heldout_test_set name the same set")
    return problems
