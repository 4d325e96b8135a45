"""A batch of a file's failed runs reaches an attributor that takes batches in one call, so an
LLM judge's calls run concurrently under its bound, cache and budget inside `cluster`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contextos_lab.insights.attribution import get_attributor
from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.runs import trace_attribution, trace_attributions
from contextos_lab.insights.attribution.turns import RunTrace, run_trace
from contextos_lab.loaders.who_and_when import load_who_and_when
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs


@dataclass
class _Batching:
    """The bundled attributor behind a batch method that records each batch it was given."""

    name: str = "batching"
    batches: list[int] = field(default_factory=list)

    def attribute(self, run: RunTrace) -> Attribution | None:
        raise AssertionError("a batch attributor is asked per batch, not per run")

    def attribute_many(self, runs: Sequence[RunTrace]) -> list[Attribution | None]:
        self.batches.append(len(runs))
        return [get_attributor().attribute(r) for r in runs]


def test_a_batch_attributor_gets_the_whole_batch_in_one_call(tmp_path) -> None:
    raws = [orchestrated_run(i) for i in range(3)] + [group_chat_run(i) for i in range(3)]
    traces = load_who_and_when(write_runs(tmp_path, raws)).traces
    model = _Batching()
    rows = trace_attributions(traces, model)
    assert model.batches == [len(traces)]
    plain = {t.trace_id: trace_attribution(t, get_attributor()) for t in traces}
    assert rows == plain  # the same rows as one run at a time with the same ranking


def test_each_ranked_candidate_carries_its_evidence(tmp_path) -> None:
    traces = load_who_and_when(write_runs(tmp_path, [group_chat_run(1)])).traces
    row = trace_attribution(traces[0], get_attributor())
    assert row is not None and len(row["candidates"]) > 1
    model = get_attributor().attribute(run_trace(traces[0]))
    assert model is not None
    assert [c["evidence"] for c in row["candidates"]] == [
        [name for name, _ in c.signals] for c in model.candidates
    ]
    assert row["candidates"][0]["evidence"]  # the named step says why it was named
