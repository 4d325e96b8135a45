"""Notebook 01's default data has traces: the generated desk runs go through the real
Who&When loader and give attributed mechanisms; clockless data gets ids with no 1970 date."""

from __future__ import annotations

from contextos_lab.insights.sources import load_sources
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.ids import new_id


def test_generated_runs_load_as_who_and_when_traces_with_times() -> None:
    loaded = load_sources(["synthetic-runs:12:1"])
    assert len(loaded.traces) == len(loaded.records) == 12 and not loaded.quarantined
    assert {r.decided_at for r in loaded.records} != {NO_CLOCK}  # a timeline can be drawn
    assert 0 < len(loaded.feedback) < 12  # some runs annotated (the answer key), not all
    again = load_sources("synthetic-runs:12:1")
    assert [r.record_id for r in again.records] == [r.record_id for r in loaded.records]


def test_clockless_ids_carry_no_date() -> None:
    assert new_id("ins", at=NO_CLOCK, seed="x").startswith("ins_") and "1970" not in new_id(
        "ins", at=NO_CLOCK, seed="x"
    )
