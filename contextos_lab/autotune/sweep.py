"""Spec file in, results out: what the `search` command and notebook 02 both call."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext, prepare
from contextos_lab.autotune.pareto import (
    feasible_front,
    front_report,
    hypervolume_history,
    promotable,
    rank_candidates,
    trials_frame,
)
from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.spec.fidelity import Fidelity
from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.study.run import run_study
from contextos_lab.autotune.study.storage import default_storage_url, redact


@dataclass
class SweepResult:
    spec: TuningRunSpec
    study: optuna.Study
    storage: str
    trials: pd.DataFrame
    front: pd.DataFrame
    candidates: pd.DataFrame
    history: pd.DataFrame
    report: dict[str, Any]

    @property
    def hypervolume(self) -> float:
        return float(self.report["hypervolume"]["value"])


def sweep(
    spec: str | Path | TuningRunSpec,
    *,
    out_dir: str | Path,
    n_trials: int | None = None,
    storage: str | None = None,
    workers: int = 1,
    sampler: str | None = None,
    seed: int | None = None,
    fidelity: Fidelity | None = None,
    progress: bool = True,
    ctx: RunContext | None = None,
    runs: bool = True,
) -> SweepResult:
    """Check the spec, run (or resume) the study, and collect the front and its ranking.

    `sampler` / `seed` override the spec's sampler config, `fidelity` its fidelity; `storage`
    defaults to a SQLite file in `out_dir`. With `runs` (default) every trial's config, scores
    and per-case results are written to `out_dir/runs/<study>/` for outside proposers
    (`autotune.run_layout`).
    """
    spec_obj = spec if isinstance(spec, TuningRunSpec) else load_spec(spec)
    ctx = ctx or prepare(spec_obj)
    if fidelity is not None and fidelity != ctx.spec.fidelity:
        ctx = dataclasses.replace(ctx, spec=ctx.spec.model_copy(update={"fidelity": fidelity}))
    cfg = sampler_config(ctx.spec, sampler, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if runs and ctx.runs is None:
        from contextos_lab.autotune.run_layout import for_context

        ctx.runs = for_context(ctx, out / "runs")
    url = storage or default_storage_url(out)
    study = run_study(ctx, url, n_trials=n_trials, workers=workers, sampler=cfg, progress=progress)
    return collect(study, ctx.spec, storage=url)


def sampler_config(
    spec: TuningRunSpec, sampler: str | None = None, seed: int | None = None
) -> SamplerConfig:
    """The spec's sampler config with this run's `sampler` kind and `seed`, when given."""
    if sampler is None and seed is None:
        return spec.sampler
    return SamplerConfig.model_validate(
        {
            **spec.sampler.model_dump(),
            **({"kind": sampler} if sampler else {}),
            **({"seed": seed} if seed is not None else {}),
        }
    )


def collect(study: optuna.Study, spec: TuningRunSpec, storage: str = "") -> SweepResult:
    frame = trials_frame(study)
    front = feasible_front(frame, spec)
    baseline = dict(study.user_attrs.get("baseline_scores", {}))
    # what goes to review: changes that gain on the target (baseline, gain <= 0 left out)
    candidates = promotable(rank_candidates(front, spec, baseline)) if baseline else front
    report = front_report(study, spec, storage=redact(storage))
    from contextos_lab.autotune.budget import spend_total

    # what the study paid (calls, dollars, wall time, cache hits) and why it stopped, if early
    report["spend"] = {**spend_total(study), "budget_stop": study.user_attrs.get("budget_stop")}
    if spec.tiers is not None:  # which tier decided what, agreement, calls and money per tier
        from contextos_lab.autotune.tiers.report import tier_report

        report["tiers"] = tier_report(study, [e.value for e in spec.objectives], spec.tiers.level)
    return SweepResult(
        spec=spec,
        study=study,
        storage=storage,
        trials=frame,
        front=front,
        candidates=candidates,
        history=hypervolume_history(frame, spec) if not frame.empty else pd.DataFrame(),
        report=report,
    )


def param_importances(study: optuna.Study, spec: TuningRunSpec) -> pd.DataFrame:
    """Importance of each surface for each objective (Optuna 5's default, PED-ANOVA), over
    complete trials; empty columns where there are too few trials to say."""
    names = [e.value for e in spec.objectives]
    out: dict[str, dict[str, float]] = {}
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    for i, name in enumerate(names):
        if len(complete) < 3:
            break
        sign = -1.0 if spec.directions[i] == "maximize" else 1.0  # PED-ANOVA: lower is better
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                out[name] = optuna.importance.get_param_importances(
                    study, target=lambda t, i=i, sign=sign: sign * t.values[i]
                )
        except (ValueError, RuntimeError, ZeroDivisionError):
            continue  # e.g. a single distinct value: nothing to attribute
    return pd.DataFrame(out).fillna(0.0)


def write_front_json(result: SweepResult, out_dir: str | Path) -> Path:
    """`DIR/front.json`, written atomically."""
    path = Path(out_dir) / "front.json"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".front.", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(result.report, fh, indent=1, sort_keys=False, default=str)
        fh.write("\n")
    os.replace(tmp, path)
    return path
