"""`LoaderContract`: what a trace loader (`cluster`'s sources, `loaders.registry`) must do.

Override `loader` (`(paths) -> TraceLoadResult`) and `files` (paths it reads with at least one
run). A loader turns files into decision records and their traces; what it cannot read it
quarantines with the file, row and reason, and never raises on bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from contextos_lab.loaders.otlp import TraceLoadResult
from contextos_lab.schemas.decision import DecisionRecord

TraceLoader = Callable[[Sequence[Path]], TraceLoadResult]


class LoaderContract:
    """Subclass and override `loader` and `files`."""

    @pytest.fixture
    def loader(self) -> TraceLoader:
        raise NotImplementedError("override `loader`: (paths) -> TraceLoadResult")

    @pytest.fixture
    def files(self) -> list[Path]:
        raise NotImplementedError("override `files`: paths the loader reads, with runs")

    def test_files_become_records_with_their_traces(
        self, loader: TraceLoader, files: list[Path]
    ) -> None:
        result = loader(files)
        assert isinstance(result, TraceLoadResult)
        assert result.records, f"no records from {files}; quarantined: {result.quarantined[:3]}"
        assert all(isinstance(r, DecisionRecord) for r in result.records)
        traced = {t.trace_id for t in result.traces}
        if traced:
            assert traced <= {r.trace_id for r in result.records}, "a trace without a record"

    def test_loading_twice_gives_the_same_records(
        self, loader: TraceLoader, files: list[Path]
    ) -> None:
        first, again = loader(files), loader(files)
        assert [r.record_id for r in first.records] == [r.record_id for r in again.records]
        assert [t.trace_id for t in first.traces] == [t.trace_id for t in again.traces]

    def test_a_garbled_file_is_quarantined_not_raised(
        self, loader: TraceLoader, tmp_path: Path
    ) -> None:
        bad = tmp_path / "garbled.json"
        bad.write_text('{"not": "closed', encoding="utf-8")
        result = loader([bad])
        assert not result.records
        assert result.quarantined, "a file it cannot read is quarantined with the reason"
        assert all(q.file == str(bad) and q.message for q in result.quarantined)


__all__ = ["LoaderContract", "TraceLoader"]
