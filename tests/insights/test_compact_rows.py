"""A corpus' records as Arrow blocks of what the analysis reads (`insights.compact_rows`), and
the memory `cluster` keeps per run once a corpus is read: no record, inputs dict or
attribution row object per run, and Python's heap flat in the number of runs (issue 39)."""

from __future__ import annotations

import gc
import json
import pickle
import sys
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pyarrow as pa

from contextos_lab.insights import compact_rows
from contextos_lab.insights.compact_rows import (
    ANALYSIS_COLUMNS,
    TASK_ID,
    CompactRows,
    analysis_inputs,
)
from contextos_lab.insights.corpus import load_corpus
from contextos_lab.insights.run_rows import RunRows
from contextos_lab.insights.sources import load_sources
from contextos_lab.insights.split import SplitSpec
from contextos_lab.schemas.decision import DecisionRecord
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs


def test_the_frame_is_the_records_frame_with_the_inputs_the_analysis_reads(monkeypatch) -> None:
    monkeypatch.setattr(compact_rows, "BLOCK", 7)  # several blocks, and runs still pending
    records = load_sources(["synthetic:60:2"]).records
    rows = CompactRows(records[:25])
    rows.extend(CompactRows(records[25:40]))  # another's blocks, as a format's merged parts
    rows.extend(records[40:])
    cut = [r.model_copy(update={"inputs": analysis_inputs(r.inputs)}) for r in records]
    want = RunRows(cut).frame()
    for name in ("evidence_refs", "evidence_refs_missing", "tool_calls"):
        want[name] = want[name].map(tuple)
    assert len(rows) == len(records)
    pd.testing.assert_frame_equal(rows.frame(), want)
    since = sorted(r.decided_at for r in records)[30] + timedelta(microseconds=1)
    kept = [r for r in cut if r.decided_at >= since]
    assert 0 < len(kept) < len(records)
    assert rows.frame(since)["record_id"].tolist() == [r.record_id for r in kept]
    assert rows[3] == cut[3] and rows[-2:] == cut[-2:]
    assert rows.trace_ids() == [r.trace_id for r in records]


def test_the_action_diff_is_kept_as_the_shape_it_has() -> None:
    inputs = {
        "source": "tau-bench",
        "file": "a.json",
        "action_diff": {"missing": ["x"], "extra": [], "wrong_arguments": {"y": ["z"]}},
    }
    assert analysis_inputs(inputs) == {
        "source": "tau-bench",
        "action_diff": {"missing": True, "wrong_arguments": True},
    }


def _per_run(o: object) -> bool:
    """An attribution row (its excerpt) or a record's inputs (its source and failed flag)."""
    if not isinstance(o, dict) or "__module__" in o:  # a class' namespace has defaults
        return False
    return isinstance(o.get("excerpt"), str) or (isinstance(o.get("source"), str) and "failed" in o)


def _alive() -> tuple[int, int]:
    """(per-run dicts, records) alive in this process now."""
    objects = gc.get_objects()
    return sum(_per_run(o) for o in objects), sum(isinstance(o, DecisionRecord) for o in objects)


def _kept(folder: Path) -> tuple[int, int, int]:
    """(pymalloc blocks, per-run dicts, records) left alive by reading `folder`: counted as
    what the read adds, so objects another test left in this worker process count nothing."""
    gc.collect()
    rows_before, records_before = _alive()
    before = sys.getallocatedblocks()
    loaded = load_corpus([str(folder)], SplitSpec(0.0), workers=1)
    gc.collect()
    blocks = sys.getallocatedblocks() - before
    rows, records = _alive()
    assert len(loaded.records) and len(loaded.attributed)
    return blocks, rows - rows_before, records - records_before


def test_a_read_corpus_keeps_no_object_per_run(tmp_path: Path, monkeypatch) -> None:
    """The reader kept each run's inputs dict and each failed run's attribution row (a
    300-character excerpt, the candidates) until the report was written, so the parent grew
    by KBs a run; now they are Arrow bytes and lines of a temporary file (and the runs of the
    block being filled: a few here)."""
    monkeypatch.setattr(compact_rows, "BLOCK", 4)
    small, large = 12, 96
    for n in (small, large):
        runs = [orchestrated_run(i) for i in range(n // 2)]
        write_runs(tmp_path / str(n), runs + [group_chat_run(i) for i in range(n // 2)])
    _kept(tmp_path / str(small))  # caches warmed
    blocks_small, rows_small, records_small = _kept(tmp_path / str(small))
    blocks_large, rows_large, records_large = _kept(tmp_path / str(large))
    assert (rows_small, records_small) == (0, 0) and (rows_large, records_large) == (0, 0)
    # the old reader kept about 40 small objects a run (record columns, inputs, attribution
    # rows); what is left now is a few caches' noise, a few hundred blocks either way
    assert blocks_large - blocks_small < 10 * (large - small), (blocks_small, blocks_large)


def test_the_blocks_wait_on_disk_and_come_back_a_few_columns_at_a_time(
    tmp_path: Path, monkeypatch
) -> None:
    """A corpus' Arrow blocks were held in memory from the first file to the end of the
    analysis (about 0.5 KB a trace); they are now in a temporary file: reading leaves no Arrow
    bytes, and the analysis' frame reads back only the columns it uses (docs/scale.md,
    "Blocks on disk")."""
    monkeypatch.setattr(compact_rows, "BLOCK", 4)
    runs = [orchestrated_run(i) for i in range(12)] + [group_chat_run(i) for i in range(12)]
    write_runs(tmp_path, runs)
    gc.collect()
    before = pa.total_allocated_bytes()
    loaded = load_corpus([str(tmp_path)], SplitSpec(0.0), workers=1)
    gc.collect()
    assert pa.total_allocated_bytes() - before == 0  # was 24 runs' blocks: about 12 KB
    rows = loaded.records
    assert isinstance(rows, CompactRows) and len(rows) == 24
    whole = rows.frame()
    narrow = rows.frame(columns=ANALYSIS_COLUMNS)
    assert list(narrow.columns) == list(ANALYSIS_COLUMNS)
    same = [c for c in ANALYSIS_COLUMNS if c != TASK_ID]
    pd.testing.assert_frame_equal(narrow[same], whole[same])
    again = pickle.loads(pickle.dumps(rows))  # a worker's blocks travel as their bytes
    pd.testing.assert_frame_equal(again.frame(), whole)


def test_the_task_id_is_a_column_apart_so_runs_share_their_inputs(monkeypatch) -> None:
    """Runs that name their own task (tau-bench) had inputs texts distinct per run, each
    decoded into its own dict (about 0.4 KB a run); the task id now waits in a cell of its
    own, and the analysis' frame holds it as a column beside inputs shared by equal runs.
    The records and the whole frame still carry it in their inputs."""
    monkeypatch.setattr(compact_rows, "BLOCK", 7)
    records = load_sources(["synthetic:40:3"]).records

    def task(i: int) -> object:  # a text, a number, a null, or none named
        return [f"t-{i}", i, None][i % 4]

    named = [
        r.model_copy(update={"inputs": {**r.inputs, "task_id": task(i)}}) if i % 4 < 3 else r
        for i, r in enumerate(records)
    ]
    rows = CompactRows(named)
    cut = [r.model_copy(update={"inputs": analysis_inputs(r.inputs)}) for r in named]
    assert rows[0] == cut[0] and rows[1] == cut[1] and rows[2] == cut[2] and rows[3] == cut[3]
    whole = rows.frame()
    assert whole["inputs"].tolist() == [r.inputs for r in cut]
    narrow = rows.frame(columns=ANALYSIS_COLUMNS)
    assert narrow[TASK_ID].tolist() == [r.inputs.get("task_id") for r in cut]
    apart = [{k: v for k, v in r.inputs.items() if k != TASK_ID} for r in cut]
    assert narrow["inputs"].tolist() == apart
    distinct = {json.dumps(d, sort_keys=True) for d in apart}
    assert len({id(d) for d in narrow["inputs"]}) == len(distinct) < len(records) // 4
