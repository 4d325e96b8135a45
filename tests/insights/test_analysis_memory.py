"""What the cluster analysis keeps per run once a corpus is read (issue 39, docs/scale.md,
"Flat in the analysis"): counted as the Python memory the analysis adds (tracemalloc, after
minus before), so what other tests left in this worker process counts nothing."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from contextos_lab.insights import compact_rows
from contextos_lab.insights.corpus import load_corpus
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.split import SplitSpec
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs


def _kept_by_analysis(folder: Path) -> int:
    """Bytes of Python objects the analysis of `folder`'s corpus leaves alive in its report."""
    loaded = load_corpus([str(folder)], SplitSpec(0.3), workers=1)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        report = analyse(loaded, text_backend=None)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(report.attributions)
    return kept


def test_the_analysis_keeps_no_copy_per_run_of_what_runs_share(tmp_path: Path, monkeypatch) -> None:
    """Runs with equal inputs, tool calls and attribution fields share their objects: the
    JSON columns were decoded once per block (here 4 runs) and every text cell of the
    attribution frame became a new string (pandas' `str` columns turned into objects)."""
    monkeypatch.setattr(compact_rows, "BLOCK", 4)
    small, large = 16, 128
    for n in (small, large):
        runs = [orchestrated_run(i) for i in range(n // 2)]
        write_runs(tmp_path / str(n), runs + [group_chat_run(i) for i in range(n // 2)])
    _kept_by_analysis(tmp_path / str(large))  # caches warmed, lazy imports done
    per_run = (
        _kept_by_analysis(tmp_path / str(large)) - _kept_by_analysis(tmp_path / str(small))
    ) / (large - small)
    # before: about 1,300 bytes a run (most runs here are failed search-split runs with an
    # attribution row); now about 600, the attribution frame's own cells and each run's ids
    assert per_run < 900, per_run
