"""`EvaluatorContract`: what an evaluation function a spec names (`evaluate:`) must do.

Override `evaluate` (the function), `cases` and `results` (a results frame for those cases, as
a harness returns it). The function maps them to a frame indexed by case_id, one numeric column
per evaluator, whatever order the rows come in, without touching its inputs.
"""

from __future__ import annotations

import pandas as pd
import pytest

from contextos_lab.evaluators.registry import EvaluateFn
from contextos_lab.schemas.scorecard import EvaluatorName

EVALUATOR_NAMES = frozenset(e.value for e in EvaluatorName)


class EvaluatorContract:
    """Subclass and override `evaluate`, `cases` and `results`."""

    @pytest.fixture
    def evaluate(self) -> EvaluateFn:
        raise NotImplementedError("override `evaluate`: (cases, results) -> frame")

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        raise NotImplementedError("override `cases`: a frame of cases (case_id first)")

    @pytest.fixture
    def results(self) -> pd.DataFrame:
        raise NotImplementedError("override `results`: the harness's results for `cases`")

    def test_one_row_per_case_indexed_by_case_id(
        self, evaluate: EvaluateFn, cases: pd.DataFrame, results: pd.DataFrame
    ) -> None:
        scores = evaluate(cases, results)
        assert isinstance(scores, pd.DataFrame)
        assert list(scores.index) == list(cases["case_id"]), "index = case_id, in cases' order"

    def test_columns_are_evaluators_with_numbers(
        self, evaluate: EvaluateFn, cases: pd.DataFrame, results: pd.DataFrame
    ) -> None:
        scores = evaluate(cases, results)
        assert len(scores.columns) and set(scores.columns) <= EVALUATOR_NAMES, list(scores.columns)
        for column in scores.columns:
            assert pd.api.types.is_numeric_dtype(scores[column]), f"{column} is not numeric"

    def test_it_is_deterministic_and_leaves_its_inputs_alone(
        self, evaluate: EvaluateFn, cases: pd.DataFrame, results: pd.DataFrame
    ) -> None:
        before = (cases.copy(deep=True), results.copy(deep=True))
        first = evaluate(cases, results)
        pd.testing.assert_frame_equal(first, evaluate(cases, results))
        pd.testing.assert_frame_equal(cases, before[0])
        pd.testing.assert_frame_equal(results, before[1])

    def test_row_order_does_not_change_a_case_score(
        self, evaluate: EvaluateFn, cases: pd.DataFrame, results: pd.DataFrame
    ) -> None:
        scores = evaluate(cases, results)
        flipped = evaluate(
            cases.iloc[::-1].reset_index(drop=True), results.iloc[::-1].reset_index(drop=True)
        )
        pd.testing.assert_frame_equal(flipped.loc[scores.index], scores)


__all__ = ["EVALUATOR_NAMES", "EvaluatorContract"]
