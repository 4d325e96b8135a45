"""The bundled evaluation functions keep the evaluator contract (`contextos_lab.testing`)."""

from __future__ import annotations

import pandas as pd
import pytest

from contextos_lab.evaluators.registry import EvaluateFn, get_evaluate
from contextos_lab.harness.protocol import baseline_config
from contextos_lab.harness.reference import SupportDeskHarness
from contextos_lab.testing import EvaluatorContract
from tests.testing.test_harness import STANDIN, _arithmetic


class TestScorecard(EvaluatorContract):
    @pytest.fixture
    def evaluate(self) -> EvaluateFn:
        return get_evaluate("scorecard")

    @pytest.fixture
    def cases(self, search_cases: pd.DataFrame) -> pd.DataFrame:
        return search_cases.head(6).reset_index(drop=True)

    @pytest.fixture
    def results(self, cases: pd.DataFrame) -> pd.DataFrame:
        h = SupportDeskHarness()
        return h.run_batch(cases, baseline_config(h))


class TestAssertions(EvaluatorContract):
    @pytest.fixture
    def evaluate(self) -> EvaluateFn:
        return get_evaluate("assertions")

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        return _arithmetic(6)

    @pytest.fixture
    def results(self, cases: pd.DataFrame) -> pd.DataFrame:
        import sys

        sys.path.insert(0, str(STANDIN))
        try:
            from standin_llm import StandInLLM
        finally:
            sys.path.remove(str(STANDIN))
        h = StandInLLM(time_scale=0)
        seeds = list(range(len(cases)))
        rows = [
            h.run(c, baseline_config(h), seed=s).model_dump()
            for c, s in zip(cases.to_dict(orient="records"), seeds, strict=True)
        ]
        return pd.DataFrame(rows)
