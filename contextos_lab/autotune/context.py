"""A checked spec bound to live objects: the harness, its search space, the search set and the
evaluation function. Built once per process (each worker rebuilds its own)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.autotune.cases import CaseSet, load_case_set
from contextos_lab.autotune.search_space import SearchSpace
from contextos_lab.autotune.spec import SpecError, TuningRunSpec, check_spec
from contextos_lab.harness.protocol import Harness, baseline_config, load_harness

#: `(cases, results) -> frame indexed by case_id, one column per evaluator`.
EvaluateFn = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]


@dataclass
class RunContext:
    spec: TuningRunSpec
    harness: Harness
    space: SearchSpace
    search: CaseSet
    evaluate: EvaluateFn

    def worker_payload(self) -> dict[str, Any]:
        """Picklable: a worker re-imports the harness and evaluator by path, reuses the cases."""
        return {**self.spec.runtime_dict(), "search": self.search}


def load_callable(path: str) -> Callable[..., Any]:
    module_name, sep, attr = path.partition(":")
    if not sep:
        raise ValueError(f"{path!r} must look like 'package.module:function'")
    fn = getattr(importlib.import_module(module_name), attr)
    if not callable(fn):
        raise TypeError(f"{path} is not callable")
    return fn


def prepare(
    spec: TuningRunSpec,
    *,
    harness: Harness | None = None,
    evaluate: EvaluateFn | None = None,
    search: CaseSet | None = None,
    set_checker: Callable[[Path, Path], list[str]] | None = None,
) -> RunContext:
    """Check the spec against the harness and the sets, then load what a trial needs.

    Raises SpecError listing every problem; nothing has run yet when it does.
    """
    spec, harness, surfaces = check_spec(spec, harness=harness, set_checker=set_checker)
    problems: list[str] = []
    if evaluate is None:
        try:
            evaluate = load_callable(spec.evaluate)
        except Exception as exc:
            problems.append(
                f"evaluate: cannot load {spec.evaluate!r} ({type(exc).__name__}: {exc})"
            )
    if search is None:
        try:
            search = load_case_set(spec.resolve(spec.search_set))
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
    space = SearchSpace(surfaces=surfaces, base_config=baseline_config(harness))
    return RunContext(spec=spec, harness=harness, space=space, search=search, evaluate=evaluate)


def rebuild(payload: dict[str, Any]) -> RunContext:
    """A worker's context from `RunContext.worker_payload()` (sets are not re-read)."""
    spec = TuningRunSpec.model_validate(payload["spec"]).with_base_dir(Path(payload["base_dir"]))
    harness = load_harness(spec.harness, **spec.harness_kwargs)
    return prepare(spec, harness=harness, search=payload["search"], set_checker=lambda a, b: [])
