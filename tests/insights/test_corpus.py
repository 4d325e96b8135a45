"""`cluster` streams: files are read lazily, a few batches in flight, the traces dropped once
summarised; the process-pool path equals the in-process one, and both equal the in-memory
`load_sources` + `analyse` they replace."""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights import corpus
from contextos_lab.insights.attribution.spilled import SpilledAttributions
from contextos_lab.insights.compact_rows import CompactRows
from contextos_lab.insights.corpus import ReadFiles, load_corpus, ordered_map, stream_source
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import Loaded, load_sources
from contextos_lab.insights.split import SplitSpec
from contextos_lab.schemas.base import canonical_json
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs

FIXTURES = Path(__file__).parent / "fixtures"


def _folder(tmp_path: Path) -> Path:
    """Two formats interleaved with a grouped one (OTLP) first, plus an unreadable file."""
    folder = tmp_path / "mixed"
    shutil.copytree(FIXTURES, folder)
    runs = [orchestrated_run(i) for i in range(4)] + [group_chat_run(i) for i in range(4)]
    write_runs(folder / "ww", runs)
    (folder / "zz_junk.json").write_text('{"hello": 1}', encoding="utf-8")
    return folder


def _whole(loaded: Loaded, trace_id: str) -> object:
    """A trace's attribution row, its fields kept on disk read back (`attribution.spilled`)."""
    found = loaded.attributed
    return found.whole(trace_id) if isinstance(found, SpilledAttributions) else found[trace_id]


def _state(loaded: Loaded) -> str:
    return canonical_json(
        {
            "records": [r.model_dump(mode="json") for r in loaded.records],
            "feedback": [f.model_dump(mode="json") for f in loaded.feedback],
            "quarantined": [q.model_dump(mode="json") for q in loaded.quarantined],
            "sources": loaded.sources,
            "attributed": {t: _whole(loaded, t) for t in loaded.attributed},
        }
    )


def test_the_pool_path_equals_the_in_process_path(tmp_path: Path) -> None:
    folder = str(_folder(tmp_path))
    split = SplitSpec(0.3)
    one = load_corpus([folder, "synthetic:40:2"], split, workers=1)
    two = load_corpus([folder, "synthetic:40:2"], split, workers=2, batch=3)
    assert _state(one) == _state(two)
    assert one.attributed and not one.traces and not two.traces  # summaries, never traces


@pytest.mark.parametrize("heldout", [0.0, 0.3])
def test_streamed_analysis_equals_the_in_memory_one(tmp_path: Path, heldout: float) -> None:
    folder = str(_folder(tmp_path))
    streamed = load_corpus([folder], SplitSpec(heldout), workers=2, batch=2)
    kept = load_sources([folder])
    assert [r.record_id for r in streamed.records] == [r.record_id for r in kept.records]
    assert streamed.sources == kept.sources
    a = analyse(streamed, heldout_fraction=heldout, text_backend=None).to_json()
    b = analyse(kept, heldout_fraction=heldout, text_backend=None).to_json()
    assert a["attributions"]  # the failed runs were attributed while streaming
    assert canonical_json(a) == canonical_json(b)


def test_files_are_read_lazily_one_batch_at_a_time(tmp_path: Path, monkeypatch) -> None:
    folder = write_runs(tmp_path / "ww", [orchestrated_run(i) for i in range(6)])
    read: list[Path] = []
    detect = corpus.detect
    monkeypatch.setattr(corpus, "detect", lambda p: read.append(p) or detect(p))
    stream = stream_source(folder, ReadFiles(SplitSpec(0.0)), batch=2)
    assert read == []  # a generator: nothing is read before it is asked for
    first = next(stream)
    assert len(read) == 2 and first.files == 1 and not hasattr(first, "traces")
    next(stream), next(stream)
    assert len(read) == 4
    assert len(list(stream)) == 3 and len(read) == 6


def test_ordered_map_keeps_order_and_bounds_what_is_in_flight() -> None:
    pulled: list[int] = []

    def tasks() -> Iterator[int]:
        for i in range(20):
            pulled.append(i)
            yield i

    with ThreadPoolExecutor(2) as pool:
        got = ordered_map(lambda i: i * i, tasks(), pool, in_flight=3)
        assert next(got) == 0 and len(pulled) == 3  # not every task submitted at once
        assert list(got) == [i * i for i in range(1, 20)]


def test_workers_must_be_positive(tmp_path: Path, capsys) -> None:
    assert main(["cluster", "synthetic:50", "--out", str(tmp_path), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_cluster_with_one_or_two_workers_writes_the_same_report(tmp_path: Path) -> None:
    folder = str(_folder(tmp_path))
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        assert main(["cluster", folder, "--out", str(out), "--workers", workers]) == 0
        outs.append(json.loads((out / "insights.json").read_text(encoding="utf-8")))
    assert outs[0] == outs[1] and outs[0]["attributions"]


class _HoldsALock:
    """An attributor that cannot be pickled (as the llm-judge, holding a lock and a cache)."""

    name = "locked"

    def __init__(self) -> None:
        import threading

        from contextos_lab.insights.attribution import get_attributor

        self._lock, self._inner = threading.Lock(), get_attributor()

    def attribute(self, run):
        return self._inner.attribute(run)


def test_an_attributor_that_cannot_be_pickled_reads_in_this_process(tmp_path: Path) -> None:
    assert corpus.pool_workers(_HoldsALock(), 2)[0] == 1
    assert corpus.pool_workers(None, 2) == (2, None)
    folder = str(_folder(tmp_path))
    with pytest.warns(UserWarning, match="cannot go to worker processes"):
        got = load_corpus([folder], SplitSpec(0.3), attributor=_HoldsALock(), workers=2)
    assert _state(got) == _state(load_corpus([folder], SplitSpec(0.3), workers=1))


def test_a_worker_sends_cells_not_a_model_object_per_run(tmp_path: Path) -> None:
    """What crosses to the parent is each run's cells (`CompactRows`), never the pickled
    `DecisionRecord`s the parent would unpickle and encode again (docs/scale.md)."""
    folder = write_runs(tmp_path / "ww", [orchestrated_run(i) for i in range(3)])
    parts = ReadFiles(SplitSpec(0.0))(sorted(folder.iterdir()))
    sent = pickle.dumps(parts)
    assert b"DecisionRecord" not in sent and b"pydantic" not in sent
    rows = CompactRows()
    for part in pickle.loads(sent):
        rows.extend(part.records)
    assert [r.record_id for r in rows] == [r.record_id for p in parts for r in p.records]
