"""A tiny harness where one knob is safe on the search set and unsafe only on held-out.

`auto_approve` skips the manual review (cheaper), which is harmless on the search cases (none is
risky) but approves the risky cases the held-out set contains: a policy violation the study can
never see. `top_k` trades cost against utility on both sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    RunResult,
)
from contextos_lab.schemas.surface import ChangeClass, SurfaceLayer, TunableSurface
from tests.autotune.conftest import toy_spec_dict

SURFACES: tuple[TunableSurface, ...] = (
    TunableSurface(
        name="top_k", layer=SurfaceLayer.retrieval, kind="int", low=1, high=4, step=1,
        baseline=3, change_class=ChangeClass.additive,
    ),
    TunableSurface(
        name="auto_approve", layer=SurfaceLayer.policy, kind="bool", baseline=False,
        change_class=ChangeClass.control_flow,
    ),
)  # fmt: skip


class GateToy:
    name = "gate_toy"

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return SURFACES

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
        return RunResult(**self.run_batch(pd.DataFrame([dict(case)]), config).iloc[0].to_dict())

    def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        solved = cases["difficulty"] <= config["top_k"] / 4.0
        approve = cases["risky"] & bool(config["auto_approve"])
        decision = np.where(approve, "approve", np.where(solved, "resolve", "escalate"))
        tokens = 100 * config["top_k"] + (0 if config["auto_approve"] else 50)
        rows = {
            "case_id": cases["case_id"],
            "decision": decision,
            "output_text": "ok",
            "evidence_used": [()] * len(cases),
            "tokens": tokens + (cases["difficulty"] * 10).round().astype(int),
            "tokens_out": 0,
            "latency_ms": 100.0 + 20.0 * config["top_k"],
            "wall_ms": 0.0,
            "trace": [()] * len(cases),
            "error": None,
        }
        return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def gate_toy() -> GateToy:
    return GateToy()


def evaluate(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    risky = cases["risky"].to_numpy(dtype=bool)
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


def cases(prefix: str, n: int, risky_every: int = 0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "case_id": [f"{prefix}{i:04d}" for i in range(n)],
            "difficulty": rng.uniform(0.0, 0.6, n).round(6),
            "risky": [bool(risky_every) and i % risky_every == 0 for i in range(n)],
        }
    )


def spec_dict(**overrides: Any) -> dict[str, Any]:
    """The autotune toy spec, pointed at this harness (floors 1.0, only its two knobs)."""
    spec = toy_spec_dict(
        name="gate_toy_run",
        harness="tests.gate.gate_toy:gate_toy",
        evaluate="tests.gate.gate_toy:evaluate",
        guardrails={
            "floors": {"policy": 1.0, "safety": 1.0},
            "accepted_deltas": {"utility": 1.0, "latency": None, "economics": None},
        },
        tunable_surfaces=["top_k", "auto_approve"],
        hypervolume={"reference_point": {"utility": 0.0, "latency": 300.0, "economics": 1.0}},
        sampler={"kind": "random", "seed": 3},
        n_trials=24,
    )
    spec.update(overrides)
    return spec


def write_project(folder: Path, n: int = 200, **overrides: Any) -> Path:
    """search.jsonl (no risky case), heldout.jsonl (every 10th risky) and run.yaml."""
    folder.mkdir(parents=True, exist_ok=True)
    cases("s", n, 0, seed=1).to_json(folder / "search.jsonl", orient="records", lines=True)
    cases("h", n, 10, seed=2).to_json(folder / "heldout.jsonl", orient="records", lines=True)
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(spec_dict(**overrides)), encoding="utf-8")
    return path


def evaluate_policy_risky_only(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`evaluate` with policy not scored (NaN) on the cases no rule judges (the non-risky)."""
    frame = evaluate(cases, results)
    frame.loc[~cases["risky"].to_numpy(dtype=bool), "policy"] = np.nan
    return frame


def evaluate_policy_unscored(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`evaluate` with no case scored on policy (no intent has a rule)."""
    return evaluate(cases, results).assign(policy=np.nan)
