"""An exemplar is the trace's own text around the step the run failed at, or ended at."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pandas as pd

from contextos_lab.insights.exemplars import insight_exemplars
from contextos_lab.loaders.otlp import Span, Trace
from contextos_lab.loaders.trace_text import CONTENT


def test_a_run_without_an_answer_key_is_shown_around_where_it_ended() -> None:
    """Inspect logs carry where a failed sample ended (`end_step`), not an answer key."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    spans = tuple(
        Span("t1", f"s{i}", "chat", at, None, None, {"step": i, CONTENT: f"turn {i}"})
        for i in range(5)
    )
    runs = pd.DataFrame(
        [{"record_id": "dr1", "trace_id": "t1", "failed": True, "inputs": {"end_step": 4}}]
    )
    insight = SimpleNamespace(evidence_refs=("dr1",))
    ((trace_id, excerpt),) = insight_exemplars(insight, runs, [Trace("t1", "inspect", spans)])  # type: ignore[arg-type]
    assert trace_id == "t1" and list(excerpt["step"]) == [2, 3, 4]
    assert list(excerpt["failing"]) == ["", "", "▶"]
