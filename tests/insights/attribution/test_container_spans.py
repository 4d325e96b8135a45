"""A span export's container span (the trace's workflow root: the parent of the other spans,
with no text and no tool call of its own) is never blamed, and the steps keep their numbers.

Every span of an exported trace becomes a step in start order, so the root is step 0; it did
nothing itself, so it must not be among the attributor's candidates (issue 39's trial had it
second at p = 0.262). A user who annotates it anyway is scored, as a miss.
"""

from __future__ import annotations

import json
from pathlib import Path

from contextos_lab.insights.attribution import run_trace
from contextos_lab.insights.attribution.features import run_signals
from contextos_lab.insights.attribution.linear import LastActorBeforeErrorRule, candidates
from contextos_lab.insights.attribution.registry import default_attributor
from contextos_lab.insights.attribution.scoring import Annotated, top_k_agreement
from contextos_lab.insights.sources import load_sources

T0 = 1_760_000_000_000_000_000  # ns
SECOND = 10**9
TID = "0af7651916cd43dd8448eb211c80319c"


def _s(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def _span(n: int, name: str, parent: str | None, attrs: list[dict], error: str = "") -> dict:
    span = {
        "traceId": TID,
        "spanId": f"{n:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + n * SECOND),
        "endTimeUnixNano": str(T0 + (n + 1) * SECOND if parent else T0 + 9 * SECOND),
        "attributes": attrs,
        "status": {"code": "STATUS_CODE_ERROR", "message": error} if error else {},
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _agent(n: int, name: str, said: str) -> dict:
    attrs = [_s("gen_ai.operation.name", "invoke_agent"), _s("gen_ai.agent.name", name)]
    return _span(n, name, f"{0:016x}", [*attrs, _s("gen_ai.completion", said)])


def _export(path: Path) -> Path:
    """planner / coder / python_tool (fails) / critic under one `workflow` root."""
    spans = [
        _span(0, "workflow", None, []),
        _agent(1, "planner", "Plan: load the sales table, then sum column B by month."),
        _agent(2, "coder", "```python\nimport pandas as pd\nprint(df['B'].sum())\n```"),
        _span(
            3,
            "python_tool",
            f"{2:016x}",
            [
                _s("gen_ai.operation.name", "execute_tool"),
                _s("gen_ai.tool.name", "python"),
                _s("gen_ai.tool.call.arguments", "print(df['B'].sum())"),
            ],
            error="NameError: name 'df' is not defined",
        ),
        _agent(4, "critic", "The code failed; the total is unknown. TERMINATE"),
    ]
    scope = {"scope": {"name": "made.up.framework"}, "spans": spans}
    request = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [scope]}]}
    path.write_text(json.dumps(request))
    return path


def test_the_workflow_root_keeps_step_0_and_is_never_a_candidate(tmp_path: Path) -> None:
    (trace,) = load_sources([_export(tmp_path / "export.json")]).traces
    run = run_trace(trace)
    assert [t.index for t in run.turns] == [0, 1, 2, 3, 4]  # numbering unchanged
    found = default_attributor().attribute(run)
    assert found is not None
    assert "workflow" not in dict(found.agents)  # before the fix: p = 0.107, a 4th candidate
    assert candidates(run, run_signals(run)) == [1, 2, 4]
    assert [t.container for t in run.turns] == [True, False, False, False, False]
    rule = LastActorBeforeErrorRule().attribute(run)
    assert rule is not None and rule.step != 0


def test_an_agent_span_holding_only_its_tool_calls_is_not_a_container(tmp_path: Path) -> None:
    tool = [_s("gen_ai.operation.name", "execute_tool"), _s("gen_ai.tool.name", "lookup")]
    root = [_s("gen_ai.operation.name", "invoke_agent"), _s("gen_ai.agent.name", "support")]
    spans = [
        _span(0, "invoke_agent support", None, root),
        _span(1, "execute_tool lookup", f"{0:016x}", tool, error="denied"),
    ]
    scope = {"scope": {"name": "made.up.framework"}, "spans": spans}
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [scope]}]}))
    (trace,) = load_sources([path]).traces
    run = run_trace(trace)
    assert [t.container for t in run.turns] == [False, False]  # it made the failing call
    assert 0 in candidates(run, run_signals(run))


def test_an_annotation_on_a_container_is_scored_as_a_miss(tmp_path: Path) -> None:
    (trace,) = load_sources([_export(tmp_path / "export.json")]).traces
    run = run_trace(trace)
    key = [Annotated(run, 0, None), Annotated(run, 2, None)]  # the root; the failing coder
    found = [default_attributor().attribute(run)] * 2
    agreement = top_k_agreement(found, key)
    assert agreement["step"]["top3"] == 0.5  # the root counts, as a miss; nothing refused
