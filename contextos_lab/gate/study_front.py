"""The study side of a gate: load the study by name and pick its promotable feasible front."""

from __future__ import annotations

from pathlib import Path

import optuna
import pandas as pd

from contextos_lab.autotune.pareto import (
    feasible_front,
    promotable,
    rank_candidates,
    target_gain,
    trials_frame,
)
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.study.storage import journal_path, open_storage, redact
from contextos_lab.errors import EXIT_NO_STUDY, ContextosError

#: What makes a study, said wherever one is missing (notebooks 03 and 05, `gate`).
MAKE_A_STUDY = "run notebook 02 or `contextos-lab search SPEC --out DIR` first"


class StudyNotFound(ContextosError, LookupError):
    """No study of that name in the storage (run the sweep first)."""

    exit_code = EXIT_NO_STUDY

    def _render_traceback_(self) -> list[str]:
        """In a notebook: the one line that says what to run, no traceback."""
        return [f"StudyNotFound: {self}"]


def study_file(storage: str) -> Path | None:
    """The file a SQLite or journal storage URL names (None for a server or memory)."""
    if storage.startswith("sqlite:///"):
        db = storage.removeprefix("sqlite:///")
        return Path(db) if db and db != ":memory:" else None
    path = journal_path(storage)
    return Path(path) if path else None


def load_study(name: str, storage: str) -> optuna.Study:
    """The study `name`; a file storage that does not exist is looked at, never created."""
    path = study_file(storage)
    if path is not None and not path.is_file():
        raise StudyNotFound(f"no study at {path}: {MAKE_A_STUDY}")
    store = open_storage(storage)
    try:
        return optuna.load_study(study_name=name, storage=store)
    except KeyError as exc:
        raise StudyNotFound(
            f"no study named {name!r} in {redact(storage)}: {MAKE_A_STUDY}"
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


def outside_status(study: optuna.Study, spec: TuningRunSpec, ranked: pd.DataFrame) -> pd.DataFrame:
    """Every outside proposal in the study: whether the gate tests it and, when not, why (its
    search-set result is the reason: dropped by racing, infeasible, the baseline's config, or
    no gain on the target). The same rules as `front_candidates`, said per proposal."""
    frame = trials_frame(study)
    columns = ["trial", "by", "state", "gated", "why", "target_value", "baseline_value"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    outside = frame[
        frame["proposer"].map(lambda p: isinstance(p, dict) and p.get("kind") == "outside")
    ]
    metric = spec.target.metric.value
    base = dict(study.user_attrs.get("baseline_scores", {})).get(metric)
    gated = set(ranked["number"]) if "number" in ranked else set()
    rows = []
    for row in outside.to_dict(orient="records"):
        value = row.get(metric)
        gain = (
            float(target_gain(pd.Series([value], dtype=float), spec, base).iloc[0])
            if base is not None and value is not None and value == value
            else None
        )
        if row["number"] in gated:
            why = "tested by the gate"
        elif row["state"] != "COMPLETE":
            why = f"not a candidate: {row['state']} on the search set (no full-set scores)"
        elif not row["feasible"]:
            why = "not a candidate: infeasible on the search set (a floor or accepted delta)"
        elif not row["config_diff"]:
            why = "not a candidate: the baseline's own config"
        elif gain is not None and gain <= 0:
            better = "higher" if spec.target.direction.value == "maximize" else "lower"
            why = (
                f"not a candidate: no gain on the target {metric} on the search set "
                f"({value:.4g} vs baseline {base:.4g}; {better} is better)"
            )
        else:
            why = "not a candidate: beyond `max_candidates`"
        rows.append(
            {
                "trial": int(row["number"]),
                "by": row["proposer"].get("by"),
                "state": row["state"],
                "gated": row["number"] in gated,
                "why": why,
                "target_value": value,
                "baseline_value": base,
            }
        )
    return pd.DataFrame(rows, columns=columns)
