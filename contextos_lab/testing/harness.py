"""`HarnessContract` and `ProgramHarnessContract`: what every harness must do, as tests you
subclass (docs/harness-contract.md, "Checking your harness").

Override the `harness` fixture with a factory of fresh harnesses and `cases` with a few cases
your harness can run under its baseline; optionally `config` (default: the baseline) and
`failing_case` (a case your harness cannot run: its error must become an error row).
Every check drives the harness through the kit's own `execute`, as a sweep does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import pytest

from contextos_lab.harness.base import BaseHarness, as_base_harness
from contextos_lab.harness.execution import ExecutionPolicy, error_mask, execute, harness_key
from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    Fault,
    Harness,
    RunResult,
    baseline_config,
    fault_of,
)
from contextos_lab.harness.subprocess_harness import SubprocessHarness
from contextos_lab.schemas.surface import TunableSurface

HarnessFactory = Callable[[], Harness | BaseHarness]


def run_all(
    harness: Harness | BaseHarness,
    cases: pd.DataFrame,
    config: Mapping[str, Any],
    **policy: Any,
) -> pd.DataFrame:
    """Every case through `execute` without a cache (the results frame, case-major)."""
    ids = [str(c) for c in cases["case_id"]]
    return execute(harness, cases, ids, config, ExecutionPolicy(cache=False, **policy)).results


def answers(results: pd.DataFrame) -> list[str]:
    """What each run decided and said (its outputs hash), in row order."""
    return [
        RunResult.model_validate(_result_fields(r)).outputs_hash()
        for r in results.to_dict(orient="records")
    ]


def _result_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: row[k] for k in RESULT_COLUMNS if k in row}
    out["evidence_used"] = tuple(out.get("evidence_used") or ())
    out["trace"] = tuple(out.get("trace") or ())
    return out


class HarnessContract:
    """Subclass and override `harness` and `cases` (see the module docstring)."""

    @pytest.fixture
    def harness(self) -> HarnessFactory:
        raise NotImplementedError("override `harness`: a factory returning a fresh harness")

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        raise NotImplementedError("override `cases`: a frame of cases (case_id first)")

    @pytest.fixture
    def config(self, harness: HarnessFactory) -> dict[str, Any]:
        return baseline_config(harness())

    @pytest.fixture
    def failing_case(self) -> Mapping[str, Any] | None:
        """A case the harness cannot run (None: the check is skipped)."""
        return None

    def test_it_is_a_harness_with_a_name(self, harness: HarnessFactory) -> None:
        h = harness()
        assert isinstance(h, (Harness, BaseHarness)), "needs name, tunable_surfaces() and run()"
        assert isinstance(h.name, str) and h.name.strip(), "`name` must be a non-empty string"

    def test_surfaces_are_typed_unique_and_stable(self, harness: HarnessFactory) -> None:
        h = harness()
        surfaces = list(h.tunable_surfaces())
        assert all(isinstance(s, TunableSurface) for s in surfaces)
        names = [s.name for s in surfaces]
        assert len(set(names)) == len(names), f"surface names repeat: {names}"
        assert [s.model_dump() for s in h.tunable_surfaces()] == [s.model_dump() for s in surfaces]

    def test_every_case_is_answered_once_in_order_and_well_formed(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        results = run_all(harness(), cases, config)
        assert list(results["case_id"]) == [str(c) for c in cases["case_id"]]
        errors = results.loc[error_mask(results), ["case_id", "error"]]
        assert errors.empty, f"the baseline errored on given cases:\n{errors.to_string()}"
        for row in results.to_dict(orient="records"):
            result = RunResult.model_validate(_result_fields(row))
            assert result.tokens_out <= result.tokens, "tokens counts the generated ones too"
            assert result.latency_ms is not None, "a run that did not error has a latency"
            assert result.fault is None, "an answered run has no fault"

    def test_the_same_seeds_give_the_same_answers_at_any_concurrency(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        alone = answers(run_all(harness(), cases, config, seed=7, repeats=2, max_concurrency=1))
        together = answers(run_all(harness(), cases, config, seed=7, repeats=2, max_concurrency=4))
        assert alone == together, "recorded seeds must reproduce every answer, whatever runs beside"

    def test_one_case_and_a_batch_agree(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        h = as_base_harness(harness())
        h.describe()
        few = cases.head(2).reset_index(drop=True)  # one call per case: keep it short
        seeds = list(range(11, 11 + len(few)))
        batch = answers(h.run_batch(few, config, seeds=seeds))
        records = few.to_dict(orient="records")
        one = [h.run(c, config, seed=s).outputs_hash() for c, s in zip(records, seeds, strict=True)]
        assert one == batch, "run(case, seed=s) and run_batch(seeds=[..s..]) must agree"

    def test_the_cache_key_is_stable(self, harness: HarnessFactory) -> None:
        a, b = as_base_harness(harness()), as_base_harness(harness())
        a.describe()
        b.describe()
        assert harness_key(a) == harness_key(b)
        assert isinstance(a.cache_identity(), str) and a.cache_identity()

    def test_a_failing_case_is_an_error_row(
        self,
        harness: HarnessFactory,
        failing_case: Mapping[str, Any] | None,
        config: dict[str, Any],
    ) -> None:
        if failing_case is None:
            pytest.skip("no `failing_case` fixture: nothing to make this harness fail")
        results = run_all(harness(), pd.DataFrame([dict(failing_case)]), config)
        row = results.iloc[0]
        assert isinstance(row["error"], str) and row["error"], "the failure names its reason"
        assert pd.isna(row["latency_ms"]), "an errored run has no latency"
        fault = fault_of(row.get("fault"))
        assert fault is None, f"a {fault} fault, not the harness's error: {row['error']}"


class ProgramHarnessContract(HarnessContract):
    """The contract of a program speaking `contextos-lab.harness/1` (one process per chunk or
    persistent); `harness` returns a `SubprocessHarness`. Closes what it started."""

    def _program(self, harness: HarnessFactory) -> SubprocessHarness:
        h = harness()
        assert isinstance(h, SubprocessHarness), "ProgramHarnessContract needs SubprocessHarness"
        return h

    def test_surfaces_come_from_the_program(self, harness: HarnessFactory) -> None:
        h = self._program(harness)
        h.describe()  # raises HarnessFailure naming the fault on a bad `--surfaces` answer
        assert h.per_process_concurrency >= 1
        assert h.version, "declare `version` in the --surfaces object (it keys the cache)"

    def test_every_line_keeps_the_protocol(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        h = self._program(harness)
        try:
            ids = list(range(len(cases)))
            frame, record = h.run_batch_recorded(cases, config, seeds=ids, case_timeout_s=30)
        finally:
            h.close()
        typed = [fault_of(f) is Fault.protocol for f in frame["fault"]]
        faults = frame.loc[typed, "error"].tolist()
        assert not faults, f"protocol faults: {faults[:3]}"
        assert record.exit_code in (0, None) and not record.timed_out

    def test_answers_are_matched_by_id_not_order(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        h = self._program(harness)
        try:
            forward = h.run_batch(cases.reset_index(drop=True), config, seeds=[5] * len(cases))
            backward = h.run_batch(
                cases.iloc[::-1].reset_index(drop=True), config, seeds=[5] * len(cases)
            )
        finally:
            h.close()
        assert dict(zip(forward["case_id"], answers(forward), strict=True)) == dict(
            zip(backward["case_id"], answers(backward), strict=True)
        )

    def test_a_persistent_program_answers_request_after_request(
        self, harness: HarnessFactory, cases: pd.DataFrame, config: dict[str, Any]
    ) -> None:
        h = self._program(harness)
        h.describe()
        if not h.persistent:
            pytest.skip("not persistent: one process per chunk")
        try:
            for _ in range(3):  # each request closed by {"batch_done": n} before the next
                frame = h.run_batch(cases, config, case_timeout_s=30)
                assert not error_mask(frame).any(), frame["error"].dropna().tolist()[:3]
        finally:
            h.close()


__all__ = ["HarnessContract", "HarnessFactory", "ProgramHarnessContract", "answers", "run_all"]
