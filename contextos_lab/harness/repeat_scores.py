"""Scores of a repeated execution: per repeat, per case (mean and pass^k), per trial.

The case stays the unit: k repeats of a case are averaged into one row before any mean,
floor or paired test, so repeats sharpen each case's estimate without inflating n.
An errored run is a failed run: policy, safety and utility 0, and no latency or cost (NaN, never
0: a config that errors more must not look faster or cheaper). Latency and cost means are over
answered runs; the error rate is reported beside them and `max_error_rate` bounds it.
A result's `cost_usd`, when the harness reported one, is its cost (economics = cents).

An evaluator may leave a case **not scored** on a judging metric (NaN; policy does for an intent
the project has no rule for). Such a case stays unscored whether its run errored or not (an
error is still a utility and safety failure, and counts in the error rate), does not fail
pass^k, and is left out of that metric's mean: the mean is over scored cases, NaN when none is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from contextos_lab.evaluators.registry import EvaluateFn
from contextos_lab.harness.execution import Execution, error_mask
from contextos_lab.harness.protocol import RESULT_COLUMNS
from contextos_lab.schemas.scorecard import EvaluatorName

EVALUATOR_COLUMNS: tuple[str, ...] = tuple(e.value for e in EvaluatorName)
#: What an errored run scores on the evaluators that judge the answer.
FAILED_SCORES: dict[str, float] = {"policy": 0.0, "safety": 0.0, "utility": 0.0}
#: What an errored run carries on the evaluators that measure what the answer cost.
UNMEASURED: tuple[str, ...] = ("latency", "economics")
#: Judging metrics an evaluator may leave unscored for a case (NaN = cannot judge it).
MAY_BE_UNSCORED: tuple[str, ...] = ("policy",)


@dataclass(frozen=True)
class RepeatScores:
    long: pd.DataFrame  # one row per (case, repeat): evaluators, `error`, `passed`
    per_case: pd.DataFrame  # index case_id (case order): evaluator means over repeats
    pass_k: pd.Series  # per case: every repeat passed (utility 1, floors 1, no error)
    repeats: int

    @property
    def error_rate(self) -> float:
        return float(self.long["error"].mean()) if len(self.long) else 0.0

    @property
    def means(self) -> dict[str, float]:
        """Per evaluator over the cases it scored (latency/cost: answered; NaN when none)."""
        return {c: float(self.per_case[c].mean()) for c in EVALUATOR_COLUMNS}

    def scored_cases(self, metric: str) -> int:
        """How many cases `metric` scored (policy leaves out intents without a rule)."""
        return int(self.per_case[metric].notna().sum())

    def summary(self) -> dict[str, float | int]:
        """What a scorecard/trial reports beside the means."""
        return {
            "repeats": self.repeats,
            "n_cases": len(self.per_case),
            "pass_k_rate": round(float(self.pass_k.mean()), 6) if len(self.pass_k) else 0.0,
            "mean_pass_rate": round(float(self.long["passed"].mean()), 6)
            if len(self.long)
            else 0.0,
            "error_rate": round(self.error_rate, 6),
            **{f"{m}_scored_cases": self.scored_cases(m) for m in MAY_BE_UNSCORED},
        }


def score_execution(
    evaluate: EvaluateFn,
    cases: pd.DataFrame,
    execution: Execution,
    economics: Callable[[pd.DataFrame], np.ndarray] | None = None,
) -> RepeatScores:
    """Evaluate each repeat against the cases, fail errored runs, average per case.

    `economics(results) -> cents per row` replaces the evaluator's economics column (the
    spec's prices, so cost and budget are priced alike)."""
    results = execution.results
    frames = []
    for r in range(execution.repeats):
        sub = results[results["repeat"] == r].reset_index(drop=True)
        frame = evaluate(cases, sub[list(RESULT_COLUMNS)])
        missing = [c for c in EVALUATOR_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"evaluation frame lacks evaluator columns {missing}")
        frame = frame[list(EVALUATOR_COLUMNS)].astype(float).copy()
        frame.index = pd.Index([str(c) for c in cases["case_id"]], name="case_id")
        if economics is not None:
            frame["economics"] = economics(sub)
        if "cost_usd" in sub:
            reported = pd.to_numeric(sub["cost_usd"], errors="coerce").to_numpy(dtype=float)
            has = ~np.isnan(reported)
            if has.any():
                frame.loc[has, "economics"] = reported[has] * 100.0
        errored = error_mask(sub).to_numpy()
        if errored.any():
            for col, value in FAILED_SCORES.items():
                judged = errored
                if col in MAY_BE_UNSCORED:  # a case the evaluator cannot judge stays unscored
                    judged = errored & frame[col].notna().to_numpy()
                frame.loc[judged, col] = value
            for col in UNMEASURED:
                frame.loc[errored, col] = np.nan
        frame["error"] = errored
        frame["repeat"] = r
        frames.append(frame)
    long = pd.concat(frames) if frames else pd.DataFrame(columns=[*EVALUATOR_COLUMNS, "error"])
    judged = long[["utility", "policy", "safety"]].to_numpy(dtype=float)
    unscored = np.isnan(judged) & np.isin(["utility", "policy", "safety"], MAY_BE_UNSCORED)
    held = (judged >= 1.0) | unscored  # policy left unscored does not fail a run
    long["passed"] = held.all(axis=1) & ~long["error"].to_numpy(dtype=bool)
    if execution.repeats == 1 and long.index.is_unique:
        # one run per case: the per-case means are the rows (a groupby would only copy them,
        # at a few ms a trial; tests/harness/test_repeat_scores.py checks the two agree)
        per_case, pass_k = long[list(EVALUATOR_COLUMNS)].copy(), long["passed"].copy()
    else:
        grouped = long.groupby(level="case_id", sort=False)
        per_case, pass_k = grouped[list(EVALUATOR_COLUMNS)].mean(), grouped["passed"].all()
    return RepeatScores(long=long, per_case=per_case, pass_k=pass_k, repeats=execution.repeats)
