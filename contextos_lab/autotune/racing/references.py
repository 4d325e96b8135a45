"""The fully evaluated trials a racing config is paired with, case by case.

A completed trial keeps its per-case scores on the racing prefix (user attr `racing_reference`)
next to its exact full-set means (`scores`). Racing pairs a candidate with the baseline (for
accepted deltas), with each feasible front member (for dominance) and with the completed trial
that agrees with it on the most prefix cases, feasible or not: a config that repeats an earlier
one case for case is then bounded as tightly as one unseen difference allows, whatever that
earlier trial's fate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from contextos_lab.autotune.sampling import local_search

#: User attr holding a completed trial's per-case scores on the racing prefix.
REFERENCE_ATTR = "racing_reference"


@dataclass(frozen=True)
class Reference:
    """A fully evaluated trial's exact means and its per-case scores on the racing prefix."""

    number: int
    means: dict[str, float]
    prefix: dict[str, np.ndarray]


def reference_of(trial: optuna.trial.FrozenTrial, key: str) -> Reference | None:
    """The trial's racing prefix, when it was kept in this study's racing order."""
    ref = trial.user_attrs.get(REFERENCE_ATTR)
    scores = trial.user_attrs.get("scores")
    if not isinstance(ref, dict) or ref.get("order") != key or not isinstance(scores, dict):
        return None
    try:
        prefix = {k: np.asarray(v, dtype=float) for k, v in ref.get("scores", {}).items()}
        # the means racing pairs against are those of the scores as raced (`fill_unmeasured`)
        means = {k: float(v) for k, v in {**scores, **(ref.get("means") or {})}.items()}
    except (TypeError, ValueError, AttributeError):
        return None  # an attribute edited out of shape: race unpaired rather than on it
    if any(v.ndim != 1 for v in prefix.values()):
        return None  # a scalar or a table where a per-case list belongs
    return Reference(trial.number, means, prefix)


def feasible_front(study: optuna.Study, key: str) -> list[tuple[np.ndarray, Reference | None]]:
    """Objective values (and racing prefix) of the complete, feasible, non-dominated trials to
    beat (the local search's front), one per distinct objective vector."""
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    out: dict[tuple[float, ...], tuple[np.ndarray, Reference | None]] = {}
    for t in local_search.feasible_front(study, [t for t in trials if t.constraints]):
        values = np.asarray(t.values, dtype=float)
        out.setdefault(tuple(values), (values, reference_of(t, key)))
    return list(out.values())


def baseline_reference(study: optuna.Study, key: str) -> Reference | None:
    """The baseline trial's prefix (the study records which trial is the baseline)."""
    number = study.user_attrs.get("baseline_trial")
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if t.number == number:
            return reference_of(t, key)
    return None


def completed_references(study: optuna.Study, key: str) -> list[Reference]:
    """Every completed trial's racing prefix kept in this order (feasible or not)."""
    out = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        ref = reference_of(t, key)
        if ref is not None:
            out.append(ref)
    return out


def nearest_reference(per_case: pd.DataFrame, refs: list[Reference]) -> Reference | None:
    """The completed trial that agrees with the candidate on the most prefix cases (the
    earliest on a tie). Chosen on where the scores differ, not on which way, so the choice
    does not lean the paired interval's centre either way."""
    n = len(per_case)
    x = per_case.to_numpy(dtype=float)
    best, best_diff = None, None
    for ref in refs:
        if any(c not in ref.prefix or len(ref.prefix[c]) < n for c in per_case.columns):
            continue
        r = np.column_stack([ref.prefix[c][:n] for c in per_case.columns])
        diff = int((np.abs(x - r) > 1e-12).any(axis=1).sum())
        if best_diff is None or diff < best_diff:
            best, best_diff = ref, diff
    return best


def keep_reference(
    trial: optuna.Trial,
    in_order: pd.DataFrame,
    sizes: list[int],
    key: str,
    raced_means: tuple[str, ...] = (),
) -> None:
    """Keep a completed trial's per-case scores on the racing prefix (the cases a later
    trial can have run before its last look), so later trials can be paired with it."""
    if len(sizes) < 2:
        return
    prefix = in_order.iloc[: sizes[-2]]
    raced = {c: float(in_order[c].mean()) for c in raced_means}
    trial.set_user_attr(
        REFERENCE_ATTR,
        {
            "order": key,
            "cases": len(prefix),
            "scores": {c: [round(float(v), 12) for v in prefix[c]] for c in prefix.columns},
            # a metric some case left unscored is raced as passing there: its raced mean
            **({"means": raced} if raced else {}),
        },
    )
