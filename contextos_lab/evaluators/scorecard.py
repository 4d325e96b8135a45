"""The five evaluators together: a per-case frame for paired statistics, and its Scorecard."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.evaluators.economics import EconomicsEvaluator
from contextos_lab.evaluators.latency import LatencyEvaluator
from contextos_lab.evaluators.policy import PolicyEvaluator
from contextos_lab.evaluators.protocol import Evaluator
from contextos_lab.evaluators.safety import SafetyEvaluator
from contextos_lab.evaluators.utility import UtilityEvaluator
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.scorecard import EvaluatorName, Scorecard


def default_evaluators() -> tuple[Evaluator, ...]:
    return (
        PolicyEvaluator(),
        SafetyEvaluator(),
        UtilityEvaluator(),
        LatencyEvaluator(),
        EconomicsEvaluator(),
    )


def evaluate(
    cases: pd.DataFrame, results: pd.DataFrame, evaluators: Sequence[Evaluator] | None = None
) -> pd.DataFrame:
    """case_id × evaluator frame (index = case_id, in the cases' order)."""
    evaluators = evaluators or default_evaluators()
    columns = {e.name.value: e.score(cases, results).to_numpy() for e in evaluators}
    return pd.DataFrame(columns, index=pd.Index(cases["case_id"], name="case_id"))


def scorecard_from_frame(
    frame: pd.DataFrame,
    subject_id: str,
    *,
    computed_at: datetime | None = None,
    details: dict[str, Any] | None = None,
) -> Scorecard:
    """Means per evaluator; latency p50/p95 and economics total in `details`.

    The id is derived from the subject and the vector, so the same scores give the same id.
    """
    means = {e.value: float(frame[e.value].mean()) if len(frame) else 0.0 for e in EvaluatorName}
    lat = frame[EvaluatorName.latency.value].to_numpy(dtype=float)
    extra = {
        "latency_p50": float(np.percentile(lat, 50)) if len(lat) else 0.0,
        "latency_p95": float(np.percentile(lat, 95)) if len(lat) else 0.0,
        "economics_total_cents": float(frame[EvaluatorName.economics.value].sum()),
        **(details or {}),
    }
    at = computed_at or datetime.now(UTC)
    seed = canonical_json({"subject": subject_id, "vector": means, "n": len(frame)})
    return Scorecard(
        scorecard_id=new_id("sc", at, seed=seed),
        subject_id=subject_id,
        n_cases=len(frame),
        details=extra,
        computed_at=at,
        **means,
    )
