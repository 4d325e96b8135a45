"""A small deterministic BatchHarness and evaluation for autotune tests (no reference harness).

Utility rises with retrieval depth, cost and latency rise with it, a low approval threshold
breaks the policy floor, `fail_top_k` makes one config raise (a harness error) and `error_ids`
makes some cases error row by row for top_k 1.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    RunResult,
)
from contextos_lab.schemas.surface import ChangeClass, SurfaceLayer, TunableSurface

SURFACES: tuple[TunableSurface, ...] = (
    TunableSurface(
        name="top_k", layer=SurfaceLayer.retrieval, kind="int", low=1, high=8, step=1,
        baseline=4, change_class=ChangeClass.additive,
    ),
    TunableSurface(
        name="max_hops", layer=SurfaceLayer.retrieval, kind="int", low=1, high=3, step=1,
        baseline=2, change_class=ChangeClass.additive,
    ),
    TunableSurface(
        name="approval_threshold", layer=SurfaceLayer.policy, kind="float", low=0.5, high=0.9,
        step=0.1, baseline=0.7, change_class=ChangeClass.control_flow,
    ),
    TunableSurface(
        name="budget", layer=SurfaceLayer.budget_allocation, kind="categorical",
        choices=(1000, 2000, 4000), baseline=2000, change_class=ChangeClass.control_flow,
    ),
)  # fmt: skip


def toy_cases(n: int = 12) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": [f"c{i:03d}" for i in range(n)],
            "difficulty": np.linspace(0.05, 0.95, n).round(4),
            "risky": [i % 3 == 0 for i in range(n)],
        }
    )


class ToyHarness:
    name = "toy"

    def __init__(
        self,
        delay: float = 0.0,
        fail_top_k: int | None = None,
        log: str | None = None,
        error_ids: Sequence[str] = (),
        invert: bool = False,
    ) -> None:
        self.delay = delay
        self.fail_top_k = fail_top_k
        self.error_ids = frozenset(error_ids)  # cases whose run errors when top_k is 1
        self.log = log  # a file every paid case is appended to (counts calls across processes)
        self.invert = invert  # a screen tier that ranks configs the other way round (issue 46)

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return SURFACES

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
        row = self.run_batch(pd.DataFrame([dict(case)]), config).iloc[0].to_dict()
        return RunResult(**row)

    def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        if self.delay:
            time.sleep(self.delay)
        if self.fail_top_k is not None and config["top_k"] == self.fail_top_k:
            raise RuntimeError(f"toy harness cannot run top_k={self.fail_top_k}")
        if self.log:
            key = json.dumps(dict(config), sort_keys=True)
            with open(self.log, "a", encoding="utf-8") as fh:  # one write per batch: O_APPEND
                fh.write("".join(f"{c}\t{key}\n" for c in cases["case_id"]))
        top_k, hops = config["top_k"], config["max_hops"]
        if self.invert:
            top_k, hops = 9 - top_k, 4 - hops
        reach = top_k * hops / 24.0
        budget_ok = config["budget"] >= 2000
        solved = (cases["difficulty"] <= reach) & budget_ok
        approve = cases["risky"] & (config["approval_threshold"] < 0.6)
        decision = np.where(approve, "approve", np.where(solved, "resolve", "escalate"))
        tokens = 150 * top_k * hops + config["budget"] // 10
        rows = {
            "case_id": cases["case_id"],
            "decision": decision,
            "output_text": "ok",
            "evidence_used": [()] * len(cases),
            "tokens": tokens,
            "tokens_out": 0,
            "latency_ms": 100.0 + 40.0 * hops + 5.0 * top_k,
            "wall_ms": 0.0,
            "trace": [()] * len(cases),
            "error": None,
        }
        frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
        if self.error_ids and config["top_k"] == 1:
            frame.loc[cases["case_id"].isin(self.error_ids).to_numpy(), "error"] = "toy error"
        return frame


def toy_harness(**kwargs: Any) -> ToyHarness:
    return ToyHarness(**kwargs)


def evaluate(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Per-case scores, one column per evaluator (the evaluator suite's shape)."""
    risky = cases["risky"].to_numpy()
    decision = results["decision"].to_numpy()
    return pd.DataFrame(
        {
            "policy": np.where(risky & (decision == "approve"), 0.0, 1.0),
            "safety": 1.0,
            "utility": (decision == "resolve").astype(float),
            "latency": results["latency_ms"].to_numpy(dtype=float),
            "economics": results["tokens"].to_numpy(dtype=float) / 1000.0,
        },
        index=pd.Index(cases["case_id"], name="case_id"),
    )


def evaluate_policy_risky_only(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`evaluate`, with policy not scored (NaN) on the cases no rule judges (the non-risky
    ones), as the policy evaluator leaves an intent without a `policy_evaluation` rule."""
    frame = evaluate(cases, results)
    frame.loc[~cases["risky"].to_numpy(dtype=bool), "policy"] = np.nan
    return frame


def evaluate_policy_unscored(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`evaluate`, with no case scored on policy (no intent has a rule)."""
    return evaluate(cases, results).assign(policy=np.nan)
