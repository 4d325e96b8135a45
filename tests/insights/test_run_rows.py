"""A corpus' records kept as columns (`insights.run_rows`): the same frame and records as the
list they replace, and no record object per run left alive after the corpus is read (issue 39)."""

from __future__ import annotations

import gc
from datetime import timedelta
from pathlib import Path

import pandas as pd

from contextos_lab.insights.corpus import load_corpus
from contextos_lab.insights.run_rows import RunRows
from contextos_lab.insights.sources import load_sources
from contextos_lab.insights.split import SplitSpec
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.decision import DecisionRecord

FIXTURES = Path(__file__).parent / "fixtures"


def test_frame_and_records_equal_the_list() -> None:
    records = load_sources(["synthetic:60:2"]).records
    rows = RunRows(records[:25])
    rows.extend(records[25:])
    assert len(rows) == len(records)
    assert [r.model_dump() for r in rows] == [r.model_dump() for r in records]
    assert rows[3] == records[3] and rows[-2:] == records[-2:]
    pd.testing.assert_frame_equal(rows.frame(), EnvelopeList(records, DecisionRecord).to_frame())
    since = sorted(r.decided_at for r in records)[30] + timedelta(microseconds=1)
    kept = [r for r in records if r.decided_at >= since]
    assert 0 < len(kept) < len(records)
    pd.testing.assert_frame_equal(rows.frame(since), EnvelopeList(kept, DecisionRecord).to_frame())


def _alive() -> int:
    gc.collect()
    return sum(isinstance(o, DecisionRecord) for o in gc.get_objects())


def test_a_read_corpus_keeps_no_record_object_per_run() -> None:
    """The old reader kept a list of every run's DecisionRecord until the analysis: memory
    grew with the corpus by the objects' overhead, not only their values."""
    before = _alive()
    loaded = load_corpus([str(FIXTURES), "synthetic:40:2"], SplitSpec(0.3), workers=1)
    assert len(loaded.records) >= 40
    assert _alive() == before
