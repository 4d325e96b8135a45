"""score_execution: repeats are averaged per case, errored runs fail, pass^k needs every run.

One run per case takes a shortcut (the rows are the per-case means); these tests hold it to
the grouped computation it replaces, on generated results with errors and NaN scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.execution import EXTRA_COLUMNS, Execution
from contextos_lab.harness.protocol import RESULT_COLUMNS
from contextos_lab.harness.repeat_scores import EVALUATOR_COLUMNS, score_execution


def _evaluate(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Scores carried on the results (the test decides them per run)."""
    return pd.DataFrame(
        {c: results["output_text"].map(lambda t, c=c: float(dict(t)[c])) for c in EVALUATOR_COLUMNS}
    )


def _execution(runs: list[list[tuple[dict[str, float], str | None]]]) -> tuple:
    """`runs[case][repeat]` = (scores, error) -> cases and an Execution, case-major."""
    n, k = len(runs), len(runs[0])
    cases = pd.DataFrame({"case_id": [f"c{i}" for i in range(n)]})
    rows = []
    for i, per_repeat in enumerate(runs):
        for r, (scores, error) in enumerate(per_repeat):
            row = dict.fromkeys(RESULT_COLUMNS)
            row.update(case_id=f"c{i}", output_text=tuple(scores.items()), error=error)
            rows.append({**row, "repeat": r, "seed": 0, "cached": False})
    results = pd.DataFrame(rows, columns=[*RESULT_COLUMNS, *EXTRA_COLUMNS])
    return cases, Execution(results, len(rows), 0, 0.0, 1, k)


score = st.sampled_from([0.0, 0.5, 1.0, float("nan")])
run = st.tuples(
    st.fixed_dictionaries({c: score for c in EVALUATOR_COLUMNS}),
    st.sampled_from([None, "", "TimeoutError: case deadline"]),
)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3).flatmap(
        lambda k: st.lists(st.lists(run, min_size=k, max_size=k), min_size=1, max_size=8)
    )
)
def test_per_case_means_and_pass_k_match_the_grouped_computation(runs: list) -> None:
    cases, execution = _execution(runs)
    scored = score_execution(_evaluate, cases, execution)
    long = scored.long
    grouped = long.groupby(level="case_id", sort=False)
    pd.testing.assert_frame_equal(scored.per_case, grouped[list(EVALUATOR_COLUMNS)].mean())
    pd.testing.assert_series_equal(scored.pass_k, grouped["passed"].all())
    assert list(scored.per_case.index) == list(cases["case_id"])
    errored = long["error"].to_numpy()
    for col in ("safety", "utility"):
        assert (long.loc[errored, col] == 0.0).all()  # an errored run is a failed run
    # ... on policy too, where policy judged the case; a case it leaves unscored (NaN: an
    # intent with no rule) stays unscored, erroring or not
    policy = long.loc[errored, "policy"].to_numpy()
    assert ((policy == 0.0) | np.isnan(policy)).all()
    raw = np.array([[scores["policy"] for scores, _ in case] for case in runs])  # [case, repeat]
    assert np.array_equal(np.isnan(long["policy"].to_numpy()), np.isnan(raw.T.ravel()))
    judged = long[["utility", "policy", "safety"]].to_numpy()
    held = (judged >= 1.0) | (np.isnan(judged) & (np.arange(3) == 1))  # unscored policy holds
    expected = held.all(axis=1) & ~errored
    assert long["passed"].to_numpy().tolist() == expected.tolist()
    assert scored.repeats == execution.repeats == len(runs[0])


def test_an_errored_run_fails_only_its_own_case() -> None:
    ok = dict.fromkeys(EVALUATOR_COLUMNS, 1.0)
    cases, execution = _execution([[(ok, None)], [(ok, "ValueError: boom")], [(ok, "")]])
    scored = score_execution(_evaluate, cases, execution)
    assert scored.pass_k.tolist() == [True, False, True]
    assert scored.per_case["utility"].tolist() == [1.0, 0.0, 1.0]
    # an errored run has no latency or cost (NaN, not what it reported, never 0): the means
    # are over answered runs, so erroring never looks faster or cheaper
    latency = scored.per_case["latency"].tolist()
    assert latency[0] == 1.0 and np.isnan(latency[1]) and latency[2] == 1.0
    assert np.isnan(scored.per_case["economics"].tolist()[1])
    assert scored.means["latency"] == 1.0
    assert execution.n_errors == 1 and np.isclose(scored.error_rate, 1 / 3)
