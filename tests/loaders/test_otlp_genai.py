"""OTLP/JSON spans shaped as the OpenTelemetry GenAI semantic conventions publish them (agent,
chat and tool spans with `gen_ai.*` attributes, array and int values, `error.type` on failed
spans), with none of this kit's own attributes."""

from __future__ import annotations

import json
from pathlib import Path

from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources, sniff
from contextos_lab.loaders.otlp import load_otlp

T0 = 1_760_000_000_000_000_000  # ns
DAY = 86_400 * 10**9


def _s(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def _i(key: str, value: int) -> dict:
    return {"key": key, "value": {"intValue": str(value)}}


def _trace(n: int, fails: bool) -> list[dict]:
    tid, start = f"{n:032x}", T0 + (n % 6) * DAY
    agent = {
        "traceId": tid,
        "spanId": f"{n:08x}0001",
        "name": "invoke_agent booking_agent",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 9 * 10**9),
        "attributes": [
            _s("gen_ai.operation.name", "invoke_agent"),
            _s("gen_ai.provider.name", "openai"),
            _s("gen_ai.agent.name", "booking_agent"),
            _s("gen_ai.agent.id", "asst_5j66UpCpwteGg4YSxUnt7lPY"),
            _s("gen_ai.conversation.id", f"conv_{n}"),
            _s("gen_ai.request.model", "gpt-4o"),
        ],
        "status": {},
    }
    chat = {
        "traceId": tid,
        "spanId": f"{n:08x}0002",
        "parentSpanId": agent["spanId"],
        "name": "chat gpt-4o",
        "kind": 3,
        "startTimeUnixNano": str(start + 10**9),
        "endTimeUnixNano": str(start + 2 * 10**9),
        "attributes": [
            _s("gen_ai.operation.name", "chat"),
            _s("gen_ai.provider.name", "openai"),
            _s("gen_ai.request.model", "gpt-4o"),
            _s("gen_ai.response.model", "gpt-4o-2024-08-06"),
            _i("gen_ai.usage.input_tokens", 812),
            _i("gen_ai.usage.output_tokens", 64),
            {
                "key": "gen_ai.response.finish_reasons",
                "value": {"arrayValue": {"values": [{"stringValue": "tool_calls"}]}},
            },
        ],
        "status": {},
    }
    tool = {
        "traceId": tid,
        "spanId": f"{n:08x}0003",
        "parentSpanId": agent["spanId"],
        "name": "execute_tool book_flight",
        "kind": 1,
        "startTimeUnixNano": str(start + 3 * 10**9),
        "endTimeUnixNano": str(start + 8 * 10**9),
        "attributes": [
            _s("gen_ai.operation.name", "execute_tool"),
            _s("gen_ai.tool.name", "book_flight"),
            _s("gen_ai.tool.call.id", f"call_{n}"),
            _s("gen_ai.tool.type", "function"),
            *([_s("error.type", "timeout")] if fails else []),
        ],
        "status": {"code": "STATUS_CODE_ERROR", "message": "upstream timed out"}
        if fails
        else {"code": 1},
    }
    return [agent, chat, tool]


def _export(path: Path, n: int = 24) -> Path:
    spans = [s for i in range(n) for s in _trace(i, fails=i % 3 == 0)]
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_s("service.name", "travel-agent")]},
                "scopeSpans": [
                    {"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": spans}
                ],
            }
        ]
    }
    path.write_text(json.dumps(request))
    return path


def test_genai_semconv_spans_become_runs_with_real_time_and_error_types(tmp_path) -> None:
    path = _export(tmp_path / "export.json")
    assert sniff(path) == "otlp"
    result = load_otlp(path)
    assert not result.quarantined and len(result.records) == 24
    failed = [r for r in result.records if r.inputs["failed"]]
    assert len(failed) == 8 and {r.inputs["reason_class"] for r in failed} == {"timeout"}
    assert {r.decision_key for r in result.records} == {"booking_agent.book_flight"}
    chat = next(s for s in result.traces[0].spans if s.operation == "chat")
    assert chat.attributes["gen_ai.usage.input_tokens"] == 812
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert len({r.decided_at.date() for r in result.records}) == 6  # the spans' own clock


def test_genai_runs_are_contrasted_and_trended_on_their_own_clock(tmp_path) -> None:
    path = _export(tmp_path / "export.json", n=60)
    report = analyse(load_sources([str(path)]), heldout_fraction=0.0, text_backend=None)
    (cluster,) = [i for i in report.insights if i.support["spec"]["rule"] == "failure_cluster"]
    assert cluster.occurrences == 20
    assert cluster.support["trend"]["direction"] in {"flat", "rising", "falling"}
    assert "baseline" not in cluster.support  # successful runs exist: a real contrast
