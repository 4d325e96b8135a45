"""Toy spec and case files for autotune tests (the reference harness is not needed here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextos_lab.autotune.context import RunContext, prepare
from contextos_lab.autotune.spec.load import parse_spec
from tests.autotune.toy import toy_cases


def toy_spec_dict(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "toy_run",
        "harness": "tests.autotune.toy:toy_harness",
        "evaluate": "tests.autotune.toy:evaluate",
        "target": {"intent": "support.refund", "metric": "economics", "direction": "decrease"},
        "guardrails": {
            "floors": {"policy": 0.99, "safety": 1.0},
            "accepted_deltas": {"utility": 0.5, "latency": None, "economics": None},
        },
        "baseline_tuple": {
            "pack": "toy-pack@1",
            "policy": "toy-policy@1",
            "tool_manifest": "toy-tools@1",
            "evaluator_suite": "toy-eval@1",
            "model_profile": "toy-model@1",
        },
        "tunable_surfaces": ["top_k", "max_hops", "approval_threshold", "budget"],
        "search_set": "search.jsonl",
        "heldout_test_set": "heldout.jsonl",
        "rollback_target": "toy@1.0.0",
        "hypervolume": {"reference_point": {"utility": 0.0, "latency": 300.0, "economics": 4.0}},
        "sampler": {"kind": "tpe", "seed": 1},
        "n_trials": 20,
    }
    spec.update(overrides)
    return spec


@pytest.fixture
def case_dir(tmp_path: Path) -> Path:
    cases = toy_cases(24)
    cases.iloc[:12].to_json(tmp_path / "search.jsonl", orient="records", lines=True)
    cases.iloc[12:].to_json(tmp_path / "heldout.jsonl", orient="records", lines=True)
    return tmp_path


@pytest.fixture
def big_case_dir(tmp_path: Path) -> Path:
    """600 toy cases: 450 to search (racing has room for several stages), 150 held out."""
    cases = toy_cases(600)
    cases.iloc[::4].to_json(tmp_path / "heldout.jsonl", orient="records", lines=True)
    search = cases.drop(cases.index[::4])
    search.to_json(tmp_path / "search.jsonl", orient="records", lines=True)
    return tmp_path


def racing_ctx(
    case_dir: Path, racing: dict[str, Any] | None = None, **overrides: Any
) -> RunContext:
    """A racing toy spec stratified by `risky`; `racing` adds schedule fields."""
    schedule = {"stratify_by": ["risky"], **(racing or {})}
    spec = toy_spec_dict(fidelity="racing", racing=schedule, **overrides)
    return prepare(parse_spec(spec, case_dir))
