"""Check a run spec against its harness (surfaces, narrowing) and its sets (disjointness)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from contextos_lab.autotune.spec.load import OverlapProblem, SpecError, parse_spec
from contextos_lab.autotune.spec.parts import SurfaceSpec
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.harness.protocol import Harness
from contextos_lab.schemas.surface import TunableSurface


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
    from contextos_lab.autotune.spec.search_space import on_grid

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
        harness = _load_harness(raw, base, problems)

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
            resolver._base_dir = base
        search_path, heldout_path = resolver.resolve(search), resolver.resolve(heldout)
        checker = set_checker or default_set_checker
        problems.extend(checker(search_path, heldout_path))

    if problems or harness is None:
        raise SpecError(_unique(problems) or ["harness: unreachable"])
    assert spec is not None
    return spec, harness, surfaces


def _load_harness(raw: Mapping[str, Any], base: Path, problems: list[str]) -> Harness | None:
    """The spec's `harness: module:factory` (beside the spec first), or None with the reason
    in `problems`."""
    from contextos_lab.harness.protocol import load_harness
    from contextos_lab.harness.user_modules import add_spec_dir, with_spec_cwd

    add_spec_dir(base)  # `harness: my_module:factory` beside the spec
    try:
        kwargs = dict(raw.get("harness_kwargs") or {})
        return load_harness(raw["harness"], **with_spec_cwd(raw["harness"], kwargs, base))
    except Exception as exc:  # any import/factory failure is a refusal reason
        problems.append(f"harness: unreachable ({type(exc).__name__}: {exc})")
        return None


def _surface_specs_or_none(value: Any) -> list[SurfaceSpec] | None:
    try:
        items = TypeAdapter(list[str | SurfaceSpec]).validate_python(value)
    except ValidationError:
        return None
    return [SurfaceSpec(name=s) if isinstance(s, str) else s for s in items]


def default_set_checker(search: Path, heldout: Path) -> list[str]:
    """Both sets load and share no case, by the gate's own rule (`cases.overlap_details`: ids,
    content hashes, normalised copies, copies apart from their lists, near copies), so a set
    the gate would refuse is refused before a trial is paid for. A held-out folder whose cases
    are withheld (a manifest alone) is compared by its manifest's content hashes."""
    problems = [
        f"{field}: {path} does not exist"
        for field, path in (("search_set", search), ("heldout_test_set", heldout))
        if not path.exists()
    ]
    if problems:
        return problems
    if search.resolve() == heldout.resolve():
        return [OverlapProblem("search_set and heldout_test_set resolve to the same folder")]
    from contextos_lab.autotune.cases import (
        heldout_case_hashes,
        load_case_set,
        overlap_details,
    )
    from contextos_lab.harness.replay_sets import ReplaySetOverlapError, check_disjoint

    try:
        search_set = load_case_set(search)
    except Exception as exc:
        return [f"replay sets: cannot load ({type(exc).__name__}: {exc})"]
    try:
        heldout_set = load_case_set(heldout)
    except Exception:
        heldout_set = None  # cases withheld or unreadable: the manifest below
    if heldout_set is not None:
        shared = overlap_details(search_set, heldout_set)
    else:
        try:
            b = heldout_case_hashes(heldout)
        except Exception as exc:
            return [f"replay sets: cannot load ({type(exc).__name__}: {exc})"]
        try:
            check_disjoint(search_set.id_to_hash(), b)
            shared = []
        except ReplaySetOverlapError as exc:
            shared = [
                (f"{x}={y}" if x != y else x, "same id or content hash") for x, y in exc.shared
            ]
    if not shared:
        return []
    shown = ", ".join(f"{name} ({how})" for name, how in shared[:5])
    return [
        OverlapProblem(
            f"search_set and heldout_test_set share {len(shared)} case(s) (search=held-out, "
            f"the gate's rule): {shown}"
        )
    ]


def _unique(items: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)
