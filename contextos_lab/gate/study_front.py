"""The study side of a gate: load the study by name and pick its promotable feasible front."""

from __future__ import annotations

import optuna
import pandas as pd

from contextos_lab.autotune.pareto import (
    feasible_front,
    promotable,
    rank_candidates,
    trials_frame,
)
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.study.storage import open_storage, redact


class StudyNotFound(LookupError):
    """No study of that name in the storage (run the sweep first)."""


def load_study(name: str, storage: str) -> optuna.Study:
    store = open_storage(storage)
    try:
        return optuna.load_study(study_name=name, storage=store)
    except KeyError as exc:
        raise StudyNotFound(
            f"no study named {name!r} in {redact(storage)} (run `contextos-lab sweep` first)"
        ) from exc


def front_candidates(
    study: optuna.Study, spec: TuningRunSpec, max_candidates: int | None = None
) -> pd.DataFrame:
    """The feasible front in the seed's ranking, promotable members only (`pareto.promotable`:
    no baseline config, a positive target gain on the search set)."""
    frame = trials_frame(study)
    if frame.empty:
        return frame
    front = feasible_front(frame, spec)
    if front.empty:
        return front
    front = front[front["config_diff"].map(bool)]
    # An outside proposal is always judged by the gate when feasible, on the front or not.
    outside = frame[
        frame["feasible"]
        & frame["proposer"].map(lambda p: isinstance(p, dict) and p.get("kind") == "outside")
        & frame["config_diff"].map(bool)
        & ~frame["number"].isin(front["number"])
    ]
    front = pd.concat([front, outside], ignore_index=True) if len(outside) else front
    baseline = dict(study.user_attrs.get("baseline_scores", {}))
    ranked = (
        promotable(rank_candidates(front.reset_index(drop=True), spec, baseline))
        if baseline
        else front
    )
    return ranked.head(max_candidates) if max_candidates else ranked
