"""Trace exports as researchers' tools write them (issue 45): each fixture under `exports/` is
shaped as its tool documents the export; four runs each, runs 1 and 3 failing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contextos_lab.insights.attribution.views import agreement
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources
from contextos_lab.loaders.conventions import ROLE
from contextos_lab.loaders.detect import detect
from contextos_lab.loaders.exports import load_exports
from contextos_lab.loaders.span_runs import ORPHAN, STEP
from contextos_lab.loaders.trace_text import CONTENT

HERE = Path(__file__).parent / "exports"
SPANS = {
    "otel_sdk_spans.json": "otel-sdk",
    "otel_sdk_spans.jsonl": "otel-sdk",
    "otel_sdk_console.json": "otel-sdk",
    "phoenix_spans.parquet": "phoenix",
    "phoenix_spans.csv": "phoenix",
    "phoenix_spans_nested.json": "phoenix",
    "langfuse_traces.json": "langfuse",
    "langsmith_runs.jsonl": "langsmith",
    "mlflow_traces.json": "mlflow",
    "otlp_openinference.json": "otlp",
}


@pytest.mark.parametrize("name", sorted(SPANS))
def test_each_export_is_recognised_by_content_and_becomes_runs(name: str, tmp_path) -> None:
    renamed = tmp_path / "export.dat"  # no name or extension to go by
    shutil.copy(HERE / name, renamed)
    assert detect(renamed) == SPANS[name]
    loaded = load_sources([str(renamed)])
    assert not loaded.quarantined and len(loaded.records) == 4
    failed = [r for r in loaded.records if r.inputs["failed"]]
    assert len(failed) == 2 and all(r.inputs["latency_ms"] == 4000.0 for r in loaded.records)
    for trace in loaded.traces:
        assert [s.attributes[STEP] for s in trace.spans] == list(range(len(trace.spans)))
        assert [s.start for s in trace.spans] == sorted(s.start for s in trace.spans)
        roles = {s.name: s.attributes[ROLE] for s in trace.spans}
        assert roles["ChatOpenAI"] == "chat" and roles["support_agent"] == "invoke_agent"
    errors = [s for t in loaded.traces for s in t.spans if s.status == "ERROR"]
    assert errors and all("error: " in s.attributes[CONTENT] for s in errors)


def test_the_issues_sdk_spans_map_kinds_tokens_and_error_types() -> None:
    result = load_exports([HERE / "otel_sdk_spans.jsonl"])
    run = next(r for r in result.records if r.trace_id.endswith("2"))
    assert run.inputs["reason_class"] == "ToolException" and run.tool_calls == ("search_docs",)
    assert (run.inputs["input_tokens"], run.inputs["output_tokens"]) == (412, 23)
    trace = next(t for t in result.traces if t.trace_id == run.trace_id)
    retriever = next(s for s in trace.spans if s.name == "search_docs")
    assert retriever.attributes["gen_ai.operation.name"] == "execute_tool"
    assert "index timed out" in retriever.attributes[CONTENT]
    assert retriever.attributes["span.resource.attributes.service.name"] == "support-agent"


def test_nested_and_flattened_attributes_read_the_same() -> None:
    flat = load_exports([HERE / "otel_sdk_spans.json"]).traces[0].spans
    nested = load_exports([HERE / "phoenix_spans_nested.json"]).traces[0].spans
    llm_flat, llm_nested = (
        next(s for s in spans if s.name == "ChatOpenAI") for spans in (flat, nested)
    )
    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", ROLE):
        assert llm_flat.attributes[key] == llm_nested.attributes[key]
    assert llm_nested.attributes["llm.input_messages.0.message.role"] == "user"
    assert llm_nested.attributes[CONTENT].startswith("user: Answer from the context")


def test_unknown_fields_are_kept_as_attributes() -> None:
    smith = load_exports([HERE / "langsmith_runs.jsonl"]).traces[0].spans[0].attributes
    assert smith["extra.metadata.ls_provider"] == "openai" and smith["tags"] == ["prod"]
    fuse = load_exports([HERE / "langfuse_traces.json"]).traces[0].spans
    assert fuse[0].attributes["sessionId"] == "session-0"
    assert fuse[1].attributes["metadata.team"] == "support"
    mlflow = load_exports([HERE / "mlflow_traces.json"]).traces[0].spans[0].attributes
    assert mlflow["mlflow.spanType"] == "AGENT"  # JSON-encoded value decoded, kept


def test_an_orphan_span_is_placed_in_its_trace_by_start_time() -> None:
    result = load_exports([HERE / "otlp_openinference.json"])
    (trace,) = [t for t in result.traces if any(s.attributes.get(ORPHAN) for s in t.spans)]
    orphan = next(s for s in trace.spans if s.attributes.get(ORPHAN))
    assert orphan.name == "search_docs" and orphan.attributes[STEP] == 1
    assert len(trace.spans) == 3 and not result.quarantined


def test_a_file_mixing_shapes_is_split_by_row() -> None:
    result = load_exports([HERE / "mixed_shapes.jsonl"])
    assert {r.inputs["source"] for r in result.records} == {"langsmith", "otel-sdk", "langfuse"}
    (bad,) = result.quarantined
    assert bad.line == 8 and "fits no known trace shape" in bad.message
    assert bad.file.endswith("mixed_shapes.jsonl")


def test_partially_annotated_runs_are_analysed_with_missing_fields_reported() -> None:
    loaded = load_sources([str(HERE / "who_and_when_partial.json")])
    assert len(loaded.records) == 6 and not loaded.quarantined and len(loaded.feedback) == 6
    for record in loaded.records:
        assert record.inputs["annotation_missing"] == {"mistake_step": "missing"}
        assert record.inputs["mistake_agent"] == "WebSurfer"
    report = analyse(loaded, heldout_fraction=0.0, text_backend=None)
    scores = agreement(report.attributions)  # the agent is scored, the missing step is not
    assert scores["annotated_runs"] == 6 and scores["step_accuracy"] is None
    assert scores["agent_accuracy"] is not None


def test_every_failed_export_run_is_attributed_with_evidence() -> None:
    loaded = load_sources([str(HERE / "langsmith_runs.jsonl")])
    report = analyse(loaded, heldout_fraction=0.0, text_backend=None)
    failed = set(report.runs.loc[report.runs["failed"], "record_id"])
    assert set(report.attributions["record_id"]) == failed and len(failed) == 2
    assert all(isinstance(s, list) for s in report.attributions["error_steps"])


def test_a_span_row_refused_names_its_field(tmp_path) -> None:
    rows = [json.loads(line) for line in (HERE / "otel_sdk_spans.jsonl").read_text().splitlines()]
    rows[4]["start_time"] = "yesterday"
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = load_exports([tmp_path / "x.jsonl"])
    (bad,) = result.quarantined
    assert (bad.line, bad.field) == (5, "start_time") and "ISO 8601" in bad.message
    assert len(result.records) == 4  # the run keeps its other spans


def test_an_api_page_of_observations_is_read_as_its_rows(tmp_path) -> None:
    traces = json.loads((HERE / "langfuse_traces.json").read_text())
    observations = [o for t in traces for o in t["observations"]]
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"data": observations, "meta": {"page": 1}}))
    assert detect(page) == "langfuse"
    loaded = load_sources([str(page)])
    assert len(loaded.records) == 4 and not loaded.quarantined
