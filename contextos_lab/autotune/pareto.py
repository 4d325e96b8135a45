"""The feasible Pareto front, its hypervolume, and the seed's ranking of front candidates.

Hypervolume is computed on normalised objectives: each objective is turned into a loss that is
0 at the spec's declared ideal point and 1 at its declared reference point, so the figure lies
in [0, 1] for points inside the box and compares across samplers, seeds and runs.
Candidates are ranked by target-metric gain, then blast radius (control-flow changes first,
then number of surfaces changed, as the seed prefers additive changes), then explainability
(how far the diff moves from the baseline, in grid steps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import optuna
import pandas as pd
from optuna._hypervolume import compute_hypervolume  # exact (WFG; closed form in 2-D / 3-D)
from optuna.trial import TrialState

from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per trial with what a reviewer reads: state, params, scores, feasibility, diff."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        ua = t.user_attrs
        change = ua.get("change", {})
        constraints = t.constraints
        row: dict[str, Any] = {
            "number": t.number,
            "state": t.state.name,
            "is_baseline": bool(ua.get("is_baseline", False)),
            "interrupted": bool(ua.get("interrupted", False)),
            "feasible": t.state == TrialState.COMPLETE
            and bool(constraints)
            and all(v <= 0 for v in constraints.values()),
            "fail_reason": ua.get("fail_reason"),
            "params": dict(t.params),
            "config_diff": change.get("diff", {}),
            "n_changed": change.get("n_changed"),
            "n_control_flow": change.get("n_control_flow"),
            "n_additive": change.get("n_additive"),
            "layers": change.get("layers"),
            "diff_size": change.get("diff_size"),
            "harness_s": ua.get("run", {}).get("harness_s"),
            # latency and economics are means over answered runs: read them beside this
            "error_rate": ua.get("run", {}).get("error_rate"),
            # policy is a mean over the cases it scored (none: NaN, "not scored", never 1.0)
            "policy_scored_cases": ua.get("run", {}).get("policy_scored_cases"),
            # racing (fidelity: racing): stage reached, cases paid for, why it was dropped
            "stage": (ua.get("racing") or {}).get("stage"),
            "n_stages": (ua.get("racing") or {}).get("n_stages"),
            "case_evaluations": (ua.get("racing") or {}).get(
                "case_evaluations", ua.get("search_set", {}).get("n_cases")
            ),
            "drop_reason": (ua.get("racing") or {}).get("dropped"),
            "not_promoted": bool((ua.get("racing") or {}).get("not_promoted")),
            # who proposed it: absent for the sampler's own trials (`contextos-lab enqueue`)
            "proposer": ua.get("proposer"),
        }
        for name, value in (ua.get("scores") or {}).items():
            row[name] = value
        for name, value in constraints.items():
            row[f"c_{name}"] = value
        rows.append(row)
    frame = pd.DataFrame(rows)
    for e in EvaluatorName:
        if e.value not in frame:
            frame[e.value] = np.nan
    return frame


def normalised_losses(values: pd.DataFrame | np.ndarray, spec: TuningRunSpec) -> np.ndarray:
    """Objectives as losses: 0 at the declared ideal, 1 at the declared reference point."""
    arr = (
        values[[e.value for e in spec.objectives]].to_numpy(dtype=float)
        if isinstance(values, pd.DataFrame)
        else np.asarray(values, dtype=float)
    )
    ideal = np.array([spec.ideal(e) for e in spec.objectives])
    ref = np.array([spec.hypervolume.reference_point[e] for e in spec.objectives])
    return (arr - ideal) / (ref - ideal)


def non_dominated(losses: np.ndarray) -> np.ndarray:
    """Mask of rows no other row dominates (all <= and one <); duplicates all stay."""
    n = len(losses)
    mask = np.ones(n, dtype=bool)
    for i in range(n):
        le = np.all(losses <= losses[i], axis=1)
        lt = np.any(losses < losses[i], axis=1)
        if np.any(le & lt):
            mask[i] = False
    return mask


def hypervolume(losses: np.ndarray, reference: Sequence[float] | None = None) -> float:
    """Exact hypervolume dominated by `losses` (minimised) up to `reference` (default all 1).

    Points not strictly inside the reference box add nothing and are dropped.
    """
    losses = np.asarray(losses, dtype=float)
    if losses.size == 0:
        return 0.0
    ref = np.ones(losses.shape[1]) if reference is None else np.asarray(reference, dtype=float)
    inside = losses[np.all(losses < ref, axis=1)]
    if len(inside) == 0:
        return 0.0
    return float(compute_hypervolume(inside, ref))


def feasible_front(frame: pd.DataFrame, spec: TuningRunSpec) -> pd.DataFrame:
    """Complete, feasible, non-dominated trials; one row per distinct config (first trial)."""
    ok = frame[(frame["state"] == "COMPLETE") & frame["feasible"]].copy()
    if ok.empty:
        return ok
    ok["_key"] = ok["params"].map(lambda p: tuple(sorted(p.items())))
    ok = ok.sort_values("number").drop_duplicates("_key").drop(columns="_key")
    mask = non_dominated(normalised_losses(ok, spec))
    return ok[mask].reset_index(drop=True)


def hypervolume_history(frame: pd.DataFrame, spec: TuningRunSpec) -> pd.DataFrame:
    """Normalised feasible hypervolume after each trial (by trial number)."""
    frame = frame.sort_values("number")
    losses = normalised_losses(frame, spec)
    good = (frame["state"] == "COMPLETE").to_numpy() & frame["feasible"].to_numpy(dtype=bool)
    front = np.empty((0, len(spec.objectives)))
    out = []
    for i, number in enumerate(frame["number"]):
        if good[i]:
            front = np.vstack([front, losses[i]])
            front = front[non_dominated(front)]
        out.append({"number": int(number), "hypervolume": hypervolume(front)})
    return pd.DataFrame(out, columns=["number", "hypervolume"])


def target_gain(values: pd.Series | np.ndarray, spec: TuningRunSpec, baseline: float) -> Any:
    """Improvement of the target metric over the baseline; positive is better either way."""
    sign = 1.0 if DIRECTIONS[spec.target.metric] == "maximize" else -1.0
    return sign * (values - baseline)


def rank_candidates(
    front: pd.DataFrame, spec: TuningRunSpec, baseline_scores: Mapping[str, float]
) -> pd.DataFrame:
    """Front candidates in the seed's order: target gain, blast radius, explainability.

    Gains within `spec.gain_tolerance` of each other count as equal, so a smaller, additive
    change beats a wider control-flow one that gains the same.
    """
    if front.empty:
        return front.assign(rank=pd.Series(dtype=int), target_gain=pd.Series(dtype=float))
    out = front.copy()
    metric = spec.target.metric.value
    out["target_gain"] = target_gain(out[metric].astype(float), spec, baseline_scores[metric])
    tol = spec.gain_tolerance
    out["_gain_key"] = (out["target_gain"] / tol).round() if tol > 0 else out["target_gain"]
    for e in EvaluatorName:
        out[f"delta_{e.value}"] = out[e.value] - baseline_scores[e.value]
    out = out.sort_values(
        ["_gain_key", "n_control_flow", "n_changed", "diff_size", "number"],
        ascending=[False, True, True, True, True],
    ).drop(columns="_gain_key")
    out.insert(0, "rank", range(1, len(out) + 1))
    return out.reset_index(drop=True)


def promotable(ranked: pd.DataFrame) -> pd.DataFrame:
    """The ranked front members worth a reviewer's (and the held-out gate's) attention: a change
    from the baseline config that gains on the target. The baseline itself and front members
    that only win on another objective (gain <= 0) cannot be promoted, and testing them would
    only spend the gate's error budget (Holm across candidates). Ranks are renumbered."""
    if ranked.empty or "target_gain" not in ranked:
        return ranked
    keep = ranked["config_diff"].map(bool) & (ranked["target_gain"].astype(float) > 0)
    if "is_baseline" in ranked:
        keep &= ~ranked["is_baseline"].astype(bool)
    out = ranked[keep].reset_index(drop=True)
    out["rank"] = range(1, len(out) + 1)
    return out


def front_report(
    study: optuna.Study,
    spec: TuningRunSpec,
    *,
    storage: str = "",
) -> dict[str, Any]:
    """Everything `front.json` holds: front, ranking, hypervolume, counts, provenance."""
    frame = trials_frame(study)
    baseline = dict(study.user_attrs.get("baseline_scores", {}))
    front = feasible_front(frame, spec)
    ranked = promotable(rank_candidates(front, spec, baseline)) if baseline else front
    hv = hypervolume(normalised_losses(front, spec)) if not front.empty else 0.0
    counts = frame["state"].value_counts().to_dict() if not frame.empty else {}
    infeasible_front_members = [] if front.empty else _floor_violations(front, spec)
    columns = [
        "rank", "number", "target_gain", "params", "config_diff", "n_changed", "n_additive",
        "n_control_flow", "layers", "diff_size", *[e.value for e in EvaluatorName],
        "error_rate", "policy_scored_cases", *[f"delta_{e.value}" for e in EvaluatorName],
    ]  # fmt: skip
    candidates = [
        {k: _plain(row[k]) for k in columns if k in row} for row in ranked.to_dict(orient="records")
    ]
    return {
        "study_name": study.study_name,
        "storage": storage,
        "target": spec.target.model_dump(mode="json"),
        "guardrails": spec.guardrails.model_dump(mode="json"),
        "baseline_tuple": spec.baseline_tuple.model_dump(mode="json"),
        "rollback_target": spec.rollback_target,
        "objectives": [{"name": e.value, "direction": DIRECTIONS[e]} for e in spec.objectives],
        "hypervolume": {
            "value": hv,
            "normalisation": "loss = (v - ideal) / (reference - ideal) per objective",
            "ideal_point": {e.value: spec.ideal(e) for e in spec.objectives},
            "reference_point": {
                e.value: spec.hypervolume.reference_point[e] for e in spec.objectives
            },
        },
        "baseline_trial": study.user_attrs.get("baseline_trial"),
        "baseline_scores": {k: _plain(v) for k, v in baseline.items()},
        "trials": {"total": len(frame), **{str(k): int(v) for k, v in counts.items()}},
        "n_feasible": int(frame["feasible"].sum()) if not frame.empty else 0,
        "front_size": len(front),
        "front_floor_violations": infeasible_front_members,
        "candidates": candidates,
    }


def _floor_violations(front: pd.DataFrame, spec: TuningRunSpec) -> list[int]:
    """Front members below a floor (always empty; kept in the report as a visible check)."""
    floors = spec.guardrails.floors.model_dump()
    bad = np.zeros(len(front), dtype=bool)
    for name, floor in floors.items():
        bad |= front[name].to_numpy(dtype=float) < floor
    return [int(n) for n in front.loc[bad, "number"]]


def _plain(value: Any) -> Any:
    """A JSON value: numpy scalars as Python ones, NaN (e.g. policy not scored) as null."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value
