"""`cluster --loader` and notebook 01's `loader`: every file read by the loader named, through
the registry (a format, a plug-in's name or `module:function`), instead of by content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.corpus import load_corpus
from contextos_lab.insights.sources import load_sources
from contextos_lab.insights.split import SplitSpec
from tests.insights import loader_plugin
from tests.insights.attribution.traces import group_chat_run, orchestrated_run

PLUGIN = "tests.insights.loader_plugin:load_wrapped"


@pytest.fixture
def wrapped(tmp_path: Path) -> Path:
    """Runs in a shape no built-in loader recognises."""
    folder = tmp_path / "wrapped"
    folder.mkdir()
    runs = [orchestrated_run(i) for i in range(3)] + [group_chat_run(i) for i in range(3)]
    for i, run in enumerate(runs):
        (folder / f"{i}.json").write_text(json.dumps({"wrapped_run": run}), encoding="utf-8")
    return folder


def test_cluster_reads_every_file_with_the_loader_named(wrapped: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    by_content = load_corpus([wrapped], SplitSpec(0.0), workers=1)
    assert not by_content.records and len(by_content.quarantined) == 6  # format unknown
    loader_plugin.CALLS.clear()
    argv = ["cluster", str(wrapped), "--out", str(out), "--loader", PLUGIN, "--workers", "2"]
    assert main([*argv, "--heldout-fraction", "0"]) == 0
    assert len(loader_plugin.CALLS) == 1 and len(loader_plugin.CALLS[0]) == 6  # one group
    report = json.loads((out / "insights.json").read_text(encoding="utf-8"))
    assert report["attributions"]  # the failed runs were read, then attributed


def test_the_notebook_path_reads_what_cluster_reads(wrapped: Path) -> None:
    kept = load_sources([wrapped], loader=PLUGIN)
    streamed = load_corpus([wrapped], SplitSpec(0.3), workers=1, loader=PLUGIN)
    assert len(kept.records) == 6
    assert [r.record_id for r in kept.records] == [r.record_id for r in streamed.records]
    assert kept.sources == streamed.sources and kept.sources[0]["kind"] == PLUGIN


def test_a_builtin_format_named_still_reads_file_by_file(tmp_path: Path) -> None:
    folder = tmp_path / "ww"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.json").write_text(json.dumps(group_chat_run(i)), encoding="utf-8")
    named = load_corpus([folder], SplitSpec(0.0), workers=1, loader="who-and-when")
    detected = load_corpus([folder], SplitSpec(0.0), workers=1)
    assert [r.record_id for r in named.records] == [r.record_id for r in detected.records]
    assert named.sources == detected.sources


@pytest.mark.parametrize("ref", ["no-such-format", "tests.insights.loader_plugin:missing"])
def test_an_unknown_loader_is_one_line_before_reading(
    wrapped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], ref: str
) -> None:
    loader_plugin.CALLS.clear()
    assert main(["cluster", str(wrapped), "--out", str(tmp_path), "--loader", ref]) == 2
    err = capsys.readouterr().err
    assert "trace loader" in err or "has no attribute" in err
    assert "Traceback" not in err and not loader_plugin.CALLS
