"""Writes the trace-export fixtures beside this file, each shaped as the tool's documentation
describes its export (field names and nesting only; the contents are invented): a small RAG
agent, four runs per file, runs 1 and 3 failing (a tool error, an LLM error).

Run `python tests/loaders/exports/make_fixtures.py` to rewrite them; the files are committed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "What is the refund window for annual plans?"
DOC = "Annual plans can be refunded within 30 days of purchase."


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _steps(run: int) -> list[dict]:
    """The neutral plan of one run: (kind, name, text in, text out, error)."""
    t = T0 + timedelta(hours=run)
    fails_tool, fails_llm = run == 1, run == 3
    return [
        {
            "kind": "CHAIN",
            "name": "support_agent",
            "start": t,
            "end": t + timedelta(seconds=4),
            "in": QUESTION,
            "out": None if fails_tool or fails_llm else "Within 30 days.",
            "error": "ToolException: search_docs failed"
            if fails_tool
            else ("RateLimitError: 429 Too Many Requests" if fails_llm else None),
            "parent": None,
        },
        {
            "kind": "RETRIEVER",
            "name": "search_docs",
            "start": t + timedelta(seconds=1),
            "end": t + timedelta(seconds=2),
            "in": QUESTION,
            "out": None if fails_tool else DOC,
            "error": "ToolException: index timed out after 10s" if fails_tool else None,
            "parent": 0,
        },
        {
            "kind": "LLM",
            "name": "ChatOpenAI",
            "start": t + timedelta(seconds=2),
            "end": t + timedelta(seconds=3),
            "in": f"Answer from the context: {QUESTION}",
            "out": None if fails_llm else "Annual plans can be refunded within 30 days.",
            "error": "RateLimitError: status code 429" if fails_llm else None,
            "parent": 0,
            "tokens": (412, 23),
        },
    ]


def _hex(run: int, i: int | None = None) -> str:
    return f"{run + 1:032x}" if i is None else f"{run + 1:08x}{i + 1:08x}"


def otel_sdk_span(run: int, i: int, step: dict, base: int = 0) -> dict:
    attrs: dict = {"openinference.span.kind": step["kind"], "input.value": step["in"]}
    if step["out"]:
        attrs["output.value"] = step["out"]
    if step["kind"] == "LLM":
        attrs.update(
            {
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": step["in"],
                "llm.token_count.prompt": step["tokens"][0],
                "llm.token_count.completion": step["tokens"][1],
            }
        )
        if step["out"]:
            attrs["llm.output_messages.0.message.role"] = "assistant"
            attrs["llm.output_messages.0.message.content"] = step["out"]
    if step["kind"] == "RETRIEVER" and step["out"]:
        attrs["retrieval.documents.0.document.content"] = DOC
        attrs["retrieval.documents.0.document.score"] = 0.82
    events = []
    if step["error"]:
        kind, _, message = step["error"].partition(": ")
        events.append(
            {
                "name": "exception",
                "timestamp": _iso(step["end"]),
                "attributes": {
                    "exception.type": kind,
                    "exception.message": message,
                    "exception.escaped": "False",
                },
            }
        )
    return {
        "name": step["name"],
        "context": {
            "trace_id": "0x" + _hex(base + run),
            "span_id": "0x" + _hex(base + run, i),
            "trace_state": "[]",
        },
        "kind": "SpanKind.INTERNAL",
        "parent_id": None if step["parent"] is None else "0x" + _hex(base + run, step["parent"]),
        "start_time": _iso(step["start"]),
        "end_time": _iso(step["end"]),
        "status": {"status_code": "ERROR", "description": step["error"]}
        if step["error"]
        else {"status_code": "OK"},
        "attributes": attrs,
        "events": events,
        "links": [],
        "resource": {"attributes": {"service.name": "support-agent"}, "schema_url": ""},
    }


def otel_sdk(base: int = 0) -> list[dict]:
    """Each file's own runs: `base` keeps one tool's trace ids apart from another's."""
    return [otel_sdk_span(r, i, s, base) for r in range(4) for i, s in enumerate(_steps(r))]


def phoenix_frame() -> pd.DataFrame:
    rows = []
    for span in otel_sdk(100):
        row = {
            "name": span["name"],
            "span_kind": span["attributes"]["openinference.span.kind"],
            "parent_id": (span["parent_id"] or "")[2:] or None,
            "start_time": pd.Timestamp(span["start_time"]),
            "end_time": pd.Timestamp(span["end_time"]),
            "status_code": span["status"]["status_code"],
            "status_message": span["status"].get("description", ""),
            "context.span_id": span["context"]["span_id"][2:],
            "context.trace_id": span["context"]["trace_id"][2:],
        }
        for key, value in span["attributes"].items():
            if key.startswith(("llm.input_messages", "llm.output_messages")):
                continue
            row[f"attributes.{key}"] = value
        attrs = span["attributes"]
        if "llm.input_messages.0.message.content" in attrs:  # Phoenix nests message lists
            row["attributes.llm.input_messages"] = json.dumps(
                [
                    {
                        "message.role": "user",
                        "message.content": attrs["llm.input_messages.0.message.content"],
                    }
                ]
            )
        rows.append(row)
    return pd.DataFrame(rows)


def langfuse(prefix: str = "lf") -> list[dict]:
    traces = []
    for run in range(4):
        steps = _steps(run)
        root = steps[0]
        observations = []
        for i, step in enumerate(steps[1:], start=1):
            obs = {
                "id": f"{prefix}-obs-{run}-{i}",
                "traceId": f"{prefix}-trace-{run}",
                "type": "GENERATION" if step["kind"] == "LLM" else "SPAN",
                "name": step["name"],
                "startTime": _iso(step["start"]),
                "endTime": _iso(step["end"]),
                "parentObservationId": None,
                "input": step["in"],
                "output": step["out"],
                "level": "ERROR" if step["error"] else "DEFAULT",
                "statusMessage": step["error"],
                "metadata": {"team": "support"},
            }
            if step["kind"] == "LLM":
                obs.update(
                    {
                        "model": "gpt-4o-mini",
                        "usage": {
                            "input": step["tokens"][0],
                            "output": step["tokens"][1],
                            "unit": "TOKENS",
                        },
                        "calculatedTotalCost": 0.00009,
                    }
                )
            observations.append(obs)
        traces.append(
            {
                "id": f"{prefix}-trace-{run}",
                "timestamp": _iso(root["start"]),
                "name": root["name"],
                "input": root["in"],
                "output": root["out"],
                "sessionId": f"session-{run // 2}",
                "userId": "u-17",
                "latency": 4.0,
                "tags": ["prod"],
                "metadata": {},
                "observations": observations,
                "scores": [],
            }
        )
    return traces


def langsmith(base: int = 0) -> list[dict]:
    runs = []
    for run in range(4):
        steps = _steps(run)
        ids = [f"00000000-0000-4000-8000-{base + run:06d}{i:06d}" for i in range(len(steps))]
        for i, step in enumerate(steps):
            row = {
                "id": ids[i],
                "name": step["name"],
                "run_type": {"CHAIN": "chain", "RETRIEVER": "retriever", "LLM": "llm"}[
                    step["kind"]
                ],
                "start_time": step["start"].isoformat(),
                "end_time": step["end"].isoformat(),
                "inputs": {"question": step["in"]},
                "outputs": None if step["out"] is None else {"output": step["out"]},
                "error": step["error"],
                "parent_run_id": None if step["parent"] is None else ids[step["parent"]],
                "trace_id": ids[0],
                "dotted_order": ".".join(
                    f"{s['start'].strftime('%Y%m%dT%H%M%S%f')}Z{ids[j]}"
                    for j, s in enumerate(steps)
                    if j in (0, i)
                ),
                "status": "error" if step["error"] else "success",
                "extra": {"metadata": {"ls_provider": "openai"}},
                "tags": ["prod"],
                "session_id": "7f3e0000-0000-4000-8000-000000000001",
            }
            if step["kind"] == "LLM":
                row.update(
                    {
                        "prompt_tokens": step["tokens"][0],
                        "completion_tokens": step["tokens"][1],
                        "total_cost": 0.00009,
                    }
                )
            runs.append(row)
    return runs


def mlflow() -> list[dict]:
    traces = []
    for run in range(4):
        steps = _steps(run)
        request_id = f"tr-{run:032x}"
        spans = []
        for i, step in enumerate(steps):
            kind = {"CHAIN": "AGENT", "RETRIEVER": "RETRIEVER", "LLM": "CHAT_MODEL"}[step["kind"]]
            spans.append(
                {
                    "name": step["name"],
                    "context": {"span_id": "0x" + _hex(run, i), "trace_id": "0x" + _hex(run)},
                    "parent_id": None
                    if step["parent"] is None
                    else "0x" + _hex(run, step["parent"]),
                    "start_time": int(step["start"].timestamp() * 1e9),
                    "end_time": int(step["end"].timestamp() * 1e9),
                    "status_code": "ERROR" if step["error"] else "OK",
                    "status_message": step["error"] or "",
                    "attributes": {
                        "mlflow.traceRequestId": json.dumps(request_id),
                        "mlflow.spanType": json.dumps(kind),
                        "mlflow.spanInputs": json.dumps({"query": step["in"]}),
                        "mlflow.spanOutputs": json.dumps(step["out"]),
                    },
                    "events": [],
                }
            )
        traces.append(
            {
                "info": {
                    "request_id": request_id,
                    "experiment_id": "0",
                    "timestamp_ms": int(steps[0]["start"].timestamp() * 1000),
                    "execution_time_ms": 4000,
                    "status": "ERROR" if steps[0]["error"] else "OK",
                    "request_metadata": {},
                    "tags": {},
                },
                "data": {
                    "spans": spans,
                    "request": json.dumps({"query": QUESTION}),
                    "response": json.dumps(steps[0]["out"]),
                },
            }
        )
    return traces


def _any(value: object) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def otlp_openinference() -> dict:
    """OTLP/JSON (the collector's file exporter) carrying OpenInference attributes; the last
    run's retriever span names a parent that is not in the file (an orphan)."""
    spans = []
    for span in otel_sdk(200):
        ns = lambda text: str(int(datetime.fromisoformat(text).timestamp() * 1e9))  # noqa: E731
        parent = (span["parent_id"] or "")[2:]
        if span["name"] == "search_docs" and span["context"]["trace_id"] == "0x" + _hex(203):
            parent = "ffffffffffffffff"
        spans.append(
            {
                "traceId": span["context"]["trace_id"][2:],
                "spanId": span["context"]["span_id"][2:],
                "parentSpanId": parent,
                "name": span["name"],
                "kind": 1,
                "startTimeUnixNano": ns(span["start_time"]),
                "endTimeUnixNano": ns(span["end_time"]),
                "attributes": [{"key": k, "value": _any(v)} for k, v in span["attributes"].items()],
                "status": {"code": 2, "message": span["status"]["description"]}
                if span["status"]["status_code"] == "ERROR"
                else {"code": 1},
            }
        )
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": "support-agent"}}
                    ]
                },
                "scopeSpans": [
                    {"scope": {"name": "openinference.instrumentation.langchain"}, "spans": spans}
                ],
            }
        ]
    }


def phoenix_nested() -> list[dict]:
    """Phoenix's REST span JSON with the OpenInference attributes nested, not dotted."""
    out = []
    for span in otel_sdk(300):
        attrs = span["attributes"]
        nested: dict = {
            "openinference": {"span": {"kind": attrs["openinference.span.kind"]}},
            "input": {"value": attrs["input.value"]},
        }
        if "output.value" in attrs:
            nested["output"] = {"value": attrs["output.value"]}
        if "llm.token_count.prompt" in attrs:
            nested["llm"] = {
                "token_count": {
                    "prompt": attrs["llm.token_count.prompt"],
                    "completion": attrs["llm.token_count.completion"],
                },
                "input_messages": [{"message": {"role": "user", "content": attrs["input.value"]}}],
            }
        out.append(
            {
                "id": f"U3BhbjoxMj{len(out)}",
                "name": span["name"],
                "context": {
                    "trace_id": span["context"]["trace_id"][2:],
                    "span_id": span["context"]["span_id"][2:],
                },
                "span_kind": attrs["openinference.span.kind"],
                "parent_id": (span["parent_id"] or "")[2:] or None,
                "start_time": span["start_time"],
                "end_time": span["end_time"],
                "status_code": span["status"]["status_code"],
                "status_message": span["status"].get("description", ""),
                "attributes": nested,
                "events": [],
            }
        )
    return out


def who_and_when_partial() -> list[dict]:
    """Six Who&When-shaped runs annotated with agent and reason but no `mistake_step`."""
    runs = []
    for i in range(6):
        runs.append(
            {
                "question_ID": f"partial-{i}",
                "level": 1,
                "question": QUESTION,
                "ground_truth": "30 days",
                "is_correct": False,
                "history": [
                    {"role": "Orchestrator", "content": f"Plan: find the refund window ({i})."},
                    {"role": "WebSurfer", "content": "I searched the help centre; 14 days."},
                    {"role": "Orchestrator", "content": "FINAL ANSWER: 14 days"},
                ],
                "mistake_agent": "WebSurfer",
                "mistake_reason": "Read the monthly plan's window instead of the annual one.",
            }
        )
    return runs


def mixed() -> list[object]:
    """One file, several shapes: a LangSmith run, an OTel SDK span run, a Langfuse
    observation, and a row that is none of them."""
    return [
        *langsmith(9)[:3],
        *otel_sdk(400)[3:6],
        langfuse("mixed")[1]["observations"][0],
        {"note": "exported by hand", "rows": 3},
    ]


def inspect_log() -> dict:
    """An Inspect AI eval log as JSON (`inspect log convert --to json`): one right and one
    wrong sample."""
    samples = [
        {
            "id": i,
            "epoch": 1,
            "input": "What is 2+2?",
            "target": "4",
            "messages": [
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": answer},
            ],
            "output": {"model": "mockllm/model", "choices": []},
            "scores": {"match": {"value": "C" if answer == "4" else "I", "answer": answer}},
        }
        for i, answer in enumerate(("4", "5"), start=1)
    ]
    return {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "run-1",
            "created": "2026-03-02T09:00:00+00:00",
            "task": "arith",
            "task_id": "t1",
            "task_version": 0,
            "dataset": {"samples": 2},
            "model": "mockllm/model",
            "config": {},
        },
        "plan": {"name": "plan", "steps": []},
        "results": {"total_samples": 2, "completed_samples": 2, "scores": []},
        "stats": {
            "started_at": "2026-03-02T09:00:00+00:00",
            "completed_at": "2026-03-02T09:00:05+00:00",
        },
        "samples": samples,
    }


def main() -> None:
    spans = otel_sdk()
    (HERE / "otel_sdk_spans.json").write_text(json.dumps(spans, indent=2) + "\n")
    (HERE / "otel_sdk_spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    # ConsoleSpanExporter: each span's to_json() (indent 4) followed by a line break
    (HERE / "otel_sdk_console.json").write_text(
        "".join(json.dumps(s, indent=4) + "\n" for s in spans)
    )
    frame = phoenix_frame()
    frame.to_parquet(HERE / "phoenix_spans.parquet", index=False)
    frame.to_csv(HERE / "phoenix_spans.csv", index=False)
    (HERE / "langfuse_traces.json").write_text(json.dumps(langfuse(), indent=2) + "\n")
    (HERE / "langsmith_runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in langsmith()))
    (HERE / "mlflow_traces.json").write_text(json.dumps(mlflow(), indent=2) + "\n")
    (HERE / "otlp_openinference.json").write_text(json.dumps(otlp_openinference()) + "\n")
    (HERE / "phoenix_spans_nested.json").write_text(json.dumps(phoenix_nested(), indent=2))
    (HERE / "who_and_when_partial.json").write_text(
        json.dumps(who_and_when_partial(), indent=2) + "\n"
    )
    (HERE / "mixed_shapes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mixed()))
    (HERE / "inspect_eval_log.json").write_text(json.dumps(inspect_log(), indent=2) + "\n")


if __name__ == "__main__":
    main()
