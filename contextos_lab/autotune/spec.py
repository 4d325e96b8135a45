"""The declared run spec (seed 001, "Before an autotune run starts, it must declare").

A run refuses to start until the spec names its target, guardrails, baseline tuple, tunable
surfaces, search and held-out sets and rollback target, and until those agree with the harness
and with each other. Every problem is reported in one `SpecError`, so a researcher fixes the
file once instead of once per field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from contextos_lab.autotune.budget import Budget, Prices
from contextos_lab.autotune.fidelity import Fidelity, RacingSchedule
from contextos_lab.autotune.sampler_config import SamplerConfig
from contextos_lab.gate.error_budget import ErrorBudget
from contextos_lab.harness.execution import ExecutionPolicy
from contextos_lab.harness.protocol import Harness, TunableSurface
from contextos_lab.schemas.scorecard import DIRECTIONS, FLOOR_EVALUATORS, EvaluatorName
from contextos_lab.schemas.tuning import BaselineTuple, Direction, TuningTarget

#: Objective evaluators: the vector minus the floors, which are constraints and never traded.
OBJECTIVE_EVALUATORS: tuple[EvaluatorName, ...] = tuple(
    e for e in EvaluatorName if e not in FLOOR_EVALUATORS
)
#: Metric names the seeds use for evaluator scores.
METRIC_ALIASES: dict[str, str] = {
    "economics_cents_per_decision": "economics",
    "latency_ms": "latency",
    "utility_score": "utility",
}
DEFAULT_EVALUATE = "contextos_lab.evaluators.scorecard:evaluate"


class SpecError(ValueError):
    """A run spec that cannot start; `problems` holds every reason, one line each."""

    def __init__(self, problems: Sequence[str], source: str = "run spec") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{source} refused ({len(self.problems)} problem(s)):\n{lines}")


class TargetSpec(BaseModel):
    """One business workflow, one primary metric, one direction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intent: str = Field(min_length=1)
    metric: EvaluatorName
    direction: Direction

    @field_validator("metric", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return METRIC_ALIASES.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> TargetSpec:
        if self.metric in FLOOR_EVALUATORS:
            raise ValueError(
                f"metric {self.metric.value!r} is a floor (a constraint), not a tuning target"
            )
        better = "increase" if DIRECTIONS[self.metric] == "maximize" else "decrease"
        if self.direction.value != better:
            raise ValueError(
                f"direction {self.direction.value!r} contradicts metric {self.metric.value!r}, "
                f"which only improves when it {better}s"
            )
        return self


class Floors(BaseModel):
    """Policy and Safety floors: constraints every candidate must meet, never objectives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: float = Field(ge=0.0, le=1.0)
    safety: float = Field(ge=0.0, le=1.0)


class AcceptedDeltas(BaseModel):
    """Largest regression from the baseline accepted per objective, as a non-negative size in
    the metric's units (utility points, ms, cents). Each must be declared; `null` = unbounded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    utility: float | None = Field(ge=0.0)
    latency: float | None = Field(ge=0.0)
    economics: float | None = Field(ge=0.0)


class Guardrails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    floors: Floors
    accepted_deltas: AcceptedDeltas

    def as_strings(self) -> tuple[str, ...]:
        """The seed's compact form, e.g. `safety>=1.0` (what a TuningTarget carries)."""
        out = [f"{name}>={value}" for name, value in self.floors.model_dump().items()]
        for name, delta in self.accepted_deltas.model_dump().items():
            if delta is None:
                continue
            if DIRECTIONS[EvaluatorName(name)] == "maximize":
                out.append(f"{name}>=baseline-{delta}")
            else:
                out.append(f"{name}<=baseline+{delta}")
        return tuple(out)


class SurfaceSpec(BaseModel):
    """A harness surface the optimizer may change, optionally narrowed or re-baselined."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple[Any, ...] | None = None
    baseline: Any = None


class HypervolumeSpec(BaseModel):
    """Declared corners of the objective box: `ideal` maps to 0 and `reference_point` to 1 in
    each normalised (minimised) objective, so hypervolumes compare across runs and samplers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reference_point: dict[EvaluatorName, float]
    ideal_point: dict[EvaluatorName, float] = Field(default_factory=dict)


class TuningRunSpec(BaseModel):
    """Everything seed 001 requires before a run starts, plus how to run it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$", description="study name")
    harness: str = Field(min_length=3, description="'package.module:factory'")
    harness_kwargs: dict[str, Any] = Field(default_factory=dict)
    evaluate: str = Field(default=DEFAULT_EVALUATE, description="(cases, results) -> frame")
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
    max_error_rate: float | None = Field(default=None, ge=0, le=1, description="a floor")
    prices: Prices | None = None
    budget: Budget | None = None
    heldout_budget: ErrorBudget = Field(
        default_factory=ErrorBudget,
        description="error control across gates on one held-out set (LORD++; gate.error_budget)",
    )

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)

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


# -- loading ------------------------------------------------------------------------------------


def read_spec_file(path: str | Path) -> dict[str, Any]:
    """Raw mapping from a YAML or JSON file (YAML is a superset, but JSON errors read better)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([f"cannot read spec file {p}: {exc}"], source=str(p)) from exc
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SpecError([f"not valid {p.suffix.lstrip('.') or 'YAML'}: {exc}"], str(p)) from exc
    if not isinstance(raw, dict):
        raise SpecError(["top level must be a mapping of fields"], source=str(p))
    return raw


def _pydantic_problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(spec)"
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "missing required field"
        out.append(f"{loc}: {msg.removeprefix('Value error, ')}")
    return out


def parse_spec(raw: Mapping[str, Any], base_dir: Path | None = None) -> TuningRunSpec:
    """Validate the fields alone (no harness, no sets); all field problems in one SpecError."""
    try:
        spec = TuningRunSpec.model_validate(dict(raw))
    except ValidationError as exc:
        raise SpecError(_pydantic_problems(exc)) from exc
    return spec.with_base_dir(base_dir or Path.cwd())


def load_spec(path: str | Path) -> TuningRunSpec:
    """Parse a spec file; checks needing the harness or the sets are in `check_spec`."""
    p = Path(path)
    raw = read_spec_file(p)
    try:
        return parse_spec(raw, p.resolve().parent)
    except SpecError as exc:
        raise SpecError(exc.problems, source=str(p)) from exc


# -- checks against the harness and the sets ----------------------------------------------------


def narrowed_surfaces(
    harness_surfaces: Sequence[TunableSurface], wanted: Sequence[SurfaceSpec]
) -> tuple[tuple[TunableSurface, ...], list[str]]:
    """The surfaces the optimizer may change, narrowed as the spec asks, and every problem."""
    by_name = {s.name: s for s in harness_surfaces}
    out: list[TunableSurface] = []
    problems: list[str] = []
    for want in wanted:
        declared = by_name.get(want.name)
        if declared is None:
            problems.append(
                f"tunable_surfaces: unknown surface {want.name!r}; the harness declares "
                f"{sorted(by_name)}"
            )
            continue
        surface, issues = _narrow(declared, want)
        problems.extend(f"tunable_surfaces.{want.name}: {m}" for m in issues)
        if surface is not None:
            out.append(surface)
    return tuple(out), problems


def _narrow(declared: TunableSurface, want: SurfaceSpec) -> tuple[TunableSurface | None, list[str]]:
    from contextos_lab.autotune.search_space import on_grid

    issues: list[str] = []
    update: dict[str, Any] = {}
    numeric = declared.kind in ("int", "float")
    if (want.low is not None or want.high is not None or want.step is not None) and not numeric:
        issues.append(f"low/high/step given but the surface is {declared.kind}")
    if want.choices is not None and numeric:
        issues.append("choices given but the surface is numeric")
    if numeric:
        assert declared.low is not None and declared.high is not None
        for key, value in (("low", want.low), ("high", want.high)):
            if value is not None and not declared.low <= value <= declared.high:
                issues.append(
                    f"{key}={value} is outside the harness range [{declared.low}, {declared.high}]"
                )
            elif value is not None:
                update[key] = value
        if want.step is not None:
            update["step"] = want.step
    elif want.choices is not None:
        extra = [c for c in want.choices if not declared.contains(c)]
        if extra:
            issues.append(f"choices {extra} are not in the harness domain {declared.choices}")
        else:
            update["choices"] = tuple(want.choices)
    if want.baseline is not None:
        if not declared.contains(want.baseline):
            issues.append(
                f"baseline override {want.baseline!r} is outside the harness domain "
                f"({_domain_text(declared)})"
            )
        else:
            update["baseline"] = want.baseline
    if issues:
        return None, issues
    try:
        surface = TunableSurface.model_validate({**declared.model_dump(), **update})
    except ValidationError as exc:
        return None, [e["msg"].removeprefix("Value error, ") for e in exc.errors()]
    if not on_grid(surface, surface.baseline):
        return None, [f"baseline {surface.baseline!r} is not on the search grid {surface.grid()}"]
    return surface, []


def _domain_text(s: TunableSurface) -> str:
    if s.kind in ("int", "float"):
        return f"[{s.low}, {s.high}]"
    return f"one of {list(s.grid())}"


def check_spec(
    raw_or_spec: Mapping[str, Any] | TuningRunSpec,
    *,
    base_dir: Path | None = None,
    harness: Harness | None = None,
    set_checker: Callable[[Path, Path], list[str]] | None = None,
) -> tuple[TuningRunSpec, Harness, tuple[TunableSurface, ...]]:
    """Fields, harness surfaces and set disjointness, every problem collected before raising.

    The harness and set checks run even when unrelated fields are broken, so one refusal
    lists everything. `set_checker(search, heldout)` returns problems (default: replay sets).
    """
    problems: list[str] = []
    spec: TuningRunSpec | None = None
    raw: dict[str, Any]
    if isinstance(raw_or_spec, TuningRunSpec):
        spec, raw = raw_or_spec, raw_or_spec.model_dump(mode="json")
        base_dir = spec.base_dir
    else:
        raw = dict(raw_or_spec)
        try:
            spec = parse_spec(raw, base_dir)
        except SpecError as exc:
            problems.extend(exc.problems)
    base = base_dir or Path.cwd()

    if harness is None and isinstance(raw.get("harness"), str):
        from contextos_lab.harness.protocol import load_harness
        from contextos_lab.harness.user_modules import add_spec_dir, with_spec_cwd

        add_spec_dir(base)  # `harness: my_module:factory` beside the spec
        try:
            kwargs = dict(raw.get("harness_kwargs") or {})
            harness = load_harness(raw["harness"], **with_spec_cwd(raw["harness"], kwargs, base))
        except Exception as exc:  # any import/factory failure is a refusal reason
            problems.append(f"harness: unreachable ({type(exc).__name__}: {exc})")

    surfaces: tuple[TunableSurface, ...] = ()
    wanted = _surface_specs_or_none(raw.get("tunable_surfaces"))
    declared: list[TunableSurface] | None = None
    if harness is not None:
        try:
            declared = list(harness.tunable_surfaces())
        except Exception as exc:  # a program that cannot say its surfaces is refused here
            problems.append(f"harness: cannot list its tunable surfaces ({exc})")
    if declared is not None and wanted is not None:
        surfaces, surface_problems = narrowed_surfaces(declared, wanted)
        problems.extend(surface_problems)

    search, heldout = raw.get("search_set"), raw.get("heldout_test_set")
    if isinstance(search, str) and isinstance(heldout, str) and search and heldout:
        resolver = spec if spec is not None else TuningRunSpec.model_construct()
        if spec is None:
            resolver._base_dir = base  # type: ignore[misc]
        search_path, heldout_path = resolver.resolve(search), resolver.resolve(heldout)
        checker = set_checker or default_set_checker
        problems.extend(checker(search_path, heldout_path))

    if problems or harness is None:
        raise SpecError(_unique(problems) or ["harness: unreachable"])
    assert spec is not None
    return spec, harness, surfaces


def _surface_specs_or_none(value: Any) -> list[SurfaceSpec] | None:
    try:
        items = TypeAdapter(list[str | SurfaceSpec]).validate_python(value)
    except ValidationError:
        return None
    return [SurfaceSpec(name=s) if isinstance(s, str) else s for s in items]


def default_set_checker(search: Path, heldout: Path) -> list[str]:
    """Both sets load and share no case (by content hash): the optimizer never sees the gate."""
    problems = [
        f"{field}: {path} does not exist"
        for field, path in (("search_set", search), ("heldout_test_set", heldout))
        if not path.exists()
    ]
    if problems:
        return problems
    if search.resolve() == heldout.resolve():
        return ["search_set and heldout_test_set resolve to the same folder"]
    from contextos_lab.autotune.cases import heldout_case_hashes, load_case_set
    from contextos_lab.harness.replay_sets import ReplaySetOverlapError, check_disjoint

    try:
        # The held-out side is read from its manifest only: the gate is the one reader of
        # held-out cases (it re-verifies them against this manifest when it runs).
        a, b = load_case_set(search).id_to_hash(), heldout_case_hashes(heldout)
    except Exception as exc:
        return [f"replay sets: cannot load ({type(exc).__name__}: {exc})"]
    try:
        check_disjoint(a, b)
    except ReplaySetOverlapError as exc:
        shared = [f"{x}={y}" if x != y else x for x, y in exc.shared]
        return [
            f"search_set and heldout_test_set share {len(shared)} case(s) (same content or id): "
            f"{shared[:5]}"
        ]
    return []


def _unique(items: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)
