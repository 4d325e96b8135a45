"""`AttributorContract`: what an attributor (who failed, at which step) must do.

Override `attributor` with a factory; `runs` defaults to a few small synthetic runs (a group
chat with an error, a run with a tool call, an empty run) and may be replaced by your own.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from contextos_lab.insights.attribution.protocol import Attribution, Attributor
from contextos_lab.insights.attribution.turns import RunTrace, Turn

AttributorFactory = Callable[[], Attributor]


def sample_runs() -> list[RunTrace]:
    """Runs any attributor can read: no annotations, nothing domain-specific."""
    chat = RunTrace(
        "chat",
        (
            Turn(0, "user", "Find the cheapest flight and book it."),
            Turn(1, "Planner", "Plan: search flights, then book the cheapest."),
            Turn(2, "Searcher", "Ran search(); Traceback: KeyError 'price'"),
            Turn(3, "Searcher", "Assuming sample data instead: flight A costs 100."),
            Turn(4, "Planner", "Booking flight A."),
        ),
    )
    tools = RunTrace(
        "tools",
        (
            Turn(0, "user", "Cancel order 7."),
            Turn(1, "assistant", "Calling the tool.", tool="cancel_order"),
            Turn(2, "tool", "error: order 7 not found"),
            Turn(3, "assistant", "Done, order 7 is cancelled."),
        ),
    )
    return [chat, tools, RunTrace("empty", ())]


class AttributorContract:
    """Subclass and override `attributor` (and `runs` if you like)."""

    @pytest.fixture
    def attributor(self) -> AttributorFactory:
        raise NotImplementedError("override `attributor`: a factory returning an attributor")

    @pytest.fixture
    def runs(self) -> list[RunTrace]:
        return sample_runs()

    def test_it_is_an_attributor_with_a_name(self, attributor: AttributorFactory) -> None:
        a = attributor()
        assert isinstance(a, Attributor) and isinstance(a.name, str) and a.name.strip()

    def test_a_run_without_turns_has_no_attribution(self, attributor: AttributorFactory) -> None:
        assert attributor().attribute(RunTrace("nothing", ())) is None

    def test_the_blamed_step_is_a_turn_of_the_run(
        self, attributor: AttributorFactory, runs: list[RunTrace]
    ) -> None:
        model = attributor()
        for run in runs:
            found = model.attribute(run)
            if found is None:
                continue
            assert isinstance(found, Attribution) and found.run_id == run.run_id
            assert 0 <= found.position < len(run.turns), "position indexes run.turns"
            turn = run.turns[found.position]
            assert (found.step, found.agent) == (turn.index, turn.speaker)

    def test_probabilities_are_probabilities_best_first(
        self, attributor: AttributorFactory, runs: list[RunTrace]
    ) -> None:
        model = attributor()
        for found in filter(None, map(model.attribute, runs)):
            assert found.probability is None or 0.0 <= found.probability <= 1.0
            probs = [c.probability for c in found.candidates]
            assert all(0.0 <= p <= 1.0 for p in probs) and probs == sorted(probs, reverse=True)
            if found.candidates:
                assert found.candidates[0].step == found.step, "the first candidate is the step"

    def test_it_is_deterministic(self, attributor: AttributorFactory, runs: list[RunTrace]) -> None:
        assert [attributor().attribute(r) for r in runs] == [
            attributor().attribute(r) for r in runs
        ]


__all__ = ["AttributorContract", "AttributorFactory", "sample_runs"]
