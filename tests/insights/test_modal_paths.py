"""Every task's modal path in one pass equals asking task by task (which was quadratic)."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.runs.rules import modal_path, modal_paths, task_column

ROWS = st.lists(
    st.tuples(
        st.sampled_from(["k1", "k2"]),
        st.none() | st.sampled_from([1, 2, "3"]),
        st.booleans(),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=3).map(tuple),
    ),
    min_size=1,  # task_column needs a row (an empty runs frame has no tasks to ask about)
    max_size=25,
)


@settings(deadline=None, max_examples=60)  # a shared CPU: no timing in tests
@given(ROWS)
def test_modal_paths_equals_modal_path_per_task(rows) -> None:
    frame = pd.DataFrame(
        {
            "decision_key": [r[0] for r in rows],
            "inputs": [{} if r[1] is None else {"task_id": r[1]} for r in rows],
            "failed": [r[2] for r in rows],
            "tool_calls": [r[3] for r in rows],
        }
    )
    tasks = task_column(frame)
    every = modal_paths(frame, tasks)
    assert set(every) == set(tasks)
    assert every == {t: modal_path(frame, t) for t in set(tasks)}
