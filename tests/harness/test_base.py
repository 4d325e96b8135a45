"""BaseHarness: the kit reads what a harness declares from its typed members, with defaults,
and a plain Protocol object is wrapped once (as_base_harness)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from contextos_lab.harness.base import BaseHarness, as_base_harness
from contextos_lab.harness.execution import ExecutionPolicy, execute, harness_key
from contextos_lab.harness.protocol import RunResult
from contextos_lab.schemas.surface import TunableSurface

CASES = pd.DataFrame({"case_id": ["a", "b", "c"]})


def _result(case_id: str, text: str) -> RunResult:
    return RunResult(
        case_id=case_id, decision=text, output_text=text, tokens=1, latency_ms=1.0, wall_ms=0.0
    )


class PerCase(BaseHarness):
    """Has a batch helper but declares itself unbatched: the kit must call `run`."""

    name = "per-case"
    max_concurrency = 3

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return ()

    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        return _result(str(case["case_id"]), f"run:{seed}")

    def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any], **_: Any) -> pd.DataFrame:
        raise AssertionError("batched is False: run_batch must not be called")

    def cache_identity(self) -> str:
        return "model-2026-01"


def test_declared_members_are_read_and_defaults_hold() -> None:
    ex = execute(PerCase(), CASES, ["h1", "h2", "h3"], {}, ExecutionPolicy(cache=False, seed=1))
    assert ex.concurrency == 3  # the declared max_concurrency
    assert [d.startswith("run:") for d in ex.results["decision"]] == [True] * 3
    assert ex.results["decision"].tolist() == [f"run:{s}" for s in ex.results["seed"]]
    assert harness_key(PerCase()).version == "model-2026-01"  # cache_identity, not `version`
    h = PerCase()
    assert (h.version, h.per_process_concurrency, h.batched) == (None, 1, False)
    assert h.batch_deadline_s(4, 2.0) == 9.0 and as_base_harness(h) is h


class Plain:
    """Protocol only: no seed in `run`, a batch method that takes seeds."""

    name = "plain"
    version = "7"

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return ()

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
        return _result(str(case["case_id"]), "one")

    def run_batch(
        self, cases: pd.DataFrame, config: Mapping[str, Any], seeds: Sequence[int] | None = None
    ) -> pd.DataFrame:
        rows = [
            _result(str(c), f"batch:{s}").model_dump()
            for c, s in zip(cases["case_id"], seeds or [], strict=True)
        ]
        return pd.DataFrame(rows)


def test_a_plain_object_is_wrapped_once_with_what_it_offers() -> None:
    wrapped = as_base_harness(Plain())
    assert wrapped.batched and wrapped.cache_identity() == "7" and wrapped.name == "plain"
    assert wrapped.run({"case_id": "x"}, {}, seed=3).decision == "one"  # seed not forced on it
    ex = execute(Plain(), CASES, ["h1", "h2", "h3"], {}, ExecutionPolicy(cache=False))
    assert ex.results["decision"].tolist() == [f"batch:{s}" for s in ex.results["seed"]]
