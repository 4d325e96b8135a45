from __future__ import annotations

from pathlib import Path

from contextos_lab.loaders.otlp import load_otlp
from contextos_lab.schemas import TerminalStatus

FIXTURES = Path(__file__).parents[1] / "insights" / "fixtures"


def test_genai_spans_become_traces_and_decisions() -> None:
    result = load_otlp(FIXTURES / "otlp_genai_small.json")
    traces = {t.trace_id: t for t in result.traces}
    assert set(traces) == {"aa01", "bb02"}
    assert traces["aa01"].tool_calls == ("order_lookup", "policy_eval")
    assert traces["aa01"].attributes["service.name"] == "support-agent"
    assert traces["aa01"].root.span_id == "r1"
    records = {r.trace_id: r for r in result.records}
    assert records["aa01"].decision_key == "support.refund.execute"
    assert records["aa01"].status == TerminalStatus.failed  # a span had STATUS_CODE_ERROR
    assert records["bb02"].status == TerminalStatus.escalated
    assert {(q.field, q.message) for q in result.quarantined} == {
        ("traceId", "span has no traceId"),
        ("startTimeUnixNano", "unreadable start time 'yesterday'"),
    }


def test_json_lines_export_with_bad_lines() -> None:
    result = load_otlp(FIXTURES / "otlp_genai_lines.jsonl")
    assert [t.trace_id for t in result.traces] == ["bb02"]
    assert [(q.line, q.field) for q in result.quarantined] == [(2, None), (3, "resourceSpans")]
