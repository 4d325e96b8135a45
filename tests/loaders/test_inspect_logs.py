"""Inspect AI eval logs: detected by content, read by inspect-ai's own reader when the optional
extra is installed, quarantined with the install hint (never a crash) when it is not."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import pytest

from contextos_lab.insights.sources import load_sources
from contextos_lab.loaders.detect import detect
from contextos_lab.loaders.inspect_logs import INSTALL_HINT, load_inspect

HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None


def _eval_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
    return path


def test_eval_archives_and_json_logs_are_detected_by_content(tmp_path: Path) -> None:
    assert detect(_eval_zip(tmp_path / "renamed.json")) == "inspect"
    (tmp_path / "log.json").write_text(json.dumps({"version": 2, "eval": {"task": "t"}}))
    assert detect(tmp_path / "log.json") == "inspect"


@pytest.mark.skipif(HAS_INSPECT, reason="checks the behaviour without the optional extra")
def test_without_the_extra_each_log_is_quarantined_with_the_install_hint(tmp_path) -> None:
    path = _eval_zip(tmp_path / "run.eval")
    result = load_inspect(path)
    assert not result.records and [q.message for q in result.quarantined] == [INSTALL_HINT]
    loaded = load_sources([str(tmp_path)])
    assert loaded.sources[0]["kind"] == "inspect" and len(loaded.quarantined) == 1


def test_samples_become_runs_through_inspects_own_reader(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="optional extra: pip install '.[inspect]'")
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.scorer import Score

    samples = [
        EvalSample(
            id=i,
            epoch=1,
            input="What is 2+2?",
            target="4",
            messages=[ChatMessageUser(content="What is 2+2?"), ChatMessageAssistant(content=a)],
            scores={"match": Score(value="C" if a == "4" else "I")},
        )
        for i, a in enumerate(["4", "5", "4"])
    ]
    spec = EvalSpec(
        created="2026-03-01T10:00:00+00:00",
        task="arithmetic",
        dataset=EvalDataset(),
        model="mockllm/model",
        config=EvalConfig(),
    )
    path = tmp_path / "log.eval"
    write_eval_log(EvalLog(eval=spec, samples=samples), str(path))
    result = load_inspect(path)
    assert not result.quarantined
    assert [r.inputs["failed"] for r in result.records] == [False, True, False]
    assert result.records[1].inputs["reason_class"] == "scored_incorrect"
    assert {r.decision_key for r in result.records} == {"arithmetic"}
    assert result.records[0].decided_at.year == 2026  # the log's own clock


def test_a_failed_sample_carries_where_it_ended_not_an_answer_key(monkeypatch) -> None:
    """Every failed sample's last message was written as `failing_step`, the answer key
    `attribution score` / `calibrate` read: a folder of unannotated Inspect logs was scored
    (and calibrated) against "the last message" as if someone had annotated it."""
    from types import SimpleNamespace

    from contextos_lab.insights.attribution.scoring import annotated_runs
    from contextos_lab.insights.runs.columns import runs_frame
    from contextos_lab.loaders import inspect_logs
    from contextos_lab.schemas.clock import NO_CLOCK

    monkeypatch.setattr(inspect_logs, "_failure", lambda sample: "sample_error")  # no extra

    said = (("user", "Rechne 2+2."), ("assistant", "5"), ("user", "Falsch."))
    messages = [SimpleNamespace(role=r, content=c, tool_calls=None) for r, c in said]
    sample = SimpleNamespace(id=1, epoch=1, scores=None, error="boom", limit=None,
                             messages=messages, target="4")  # fmt: skip
    made, _ = inspect_logs._sample(Path("log.eval"), "arith", "run1", sample, NO_CLOCK)
    assert made is not None
    trace, record = made
    assert record.inputs["failed"] and record.inputs["end_step"] == 2
    assert "failing_step" not in record.inputs
    assert annotated_runs([trace], runs_frame([record])) == []
