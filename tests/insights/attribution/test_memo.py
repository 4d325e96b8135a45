"""The remembered last run: same answers, own copies, recomputed for another run or argument."""

from __future__ import annotations

from contextos_lab.insights.attribution.features import run_signals, step_features
from contextos_lab.insights.attribution.memo import last_run, rows_copy
from contextos_lab.insights.attribution.turns import RunTrace, Turn


def test_a_hit_needs_the_same_run_and_arguments_and_returns_a_copy() -> None:
    calls: list[tuple] = []

    @last_run(rows_copy)
    def rows(run: object, k: int = 0) -> list[dict[str, float]]:
        calls.append((run, k))
        return [{"k": float(k)}]

    a, b = object(), object()
    first = rows(a)
    first[0]["k"] = 9.0  # a caller's change never reaches the next caller
    assert rows(a) == [{"k": 0.0}] and len(calls) == 1
    assert rows(a, 1) == [{"k": 1.0}] and rows(b, 1) == [{"k": 1.0}] and len(calls) == 3


def test_features_are_the_same_asked_once_or_twice() -> None:
    turns = (
        Turn(0, "Planner", "Solve it."),
        Turn(1, "Coder", "```python\nprint(1/0)\n```"),
        Turn(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
    )
    run, twin = RunTrace("r", turns), RunTrace("r", turns)
    s = run_signals(run)
    s.errors.append(99)  # mutating a returned value leaves the remembered one intact
    assert run_signals(run) == run_signals(twin) and 99 not in run_signals(run).errors
    assert step_features(run, run_signals(run)) == step_features(twin)
