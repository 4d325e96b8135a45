"""Span attributes as the tools name them, read into the few keys the run model uses.

Observability tools agree on spans but not on attribute names: OpenInference (Phoenix, Arize)
writes `openinference.span.kind`, `llm.input_messages.N.message.content`, `llm.token_count.*`,
`input.value`/`output.value`; the OpenTelemetry GenAI conventions (and OpenLLMetry) write
`gen_ai.operation.name`, `gen_ai.usage.input_tokens`, `gen_ai.prompt.N.content`; MLflow writes
`mlflow.spanType`; LangSmith and Langfuse have a run type or observation type. This module maps
every one of them onto the kit's keys (operation, tool, agent, step text, tokens, cost) and
*adds* them: the attributes the tool wrote stay on the span as written, flattened to dotted keys
(`llm.input_messages.0.message.content`) whether they came flat or nested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from contextos_lab.loaders.otlp import AGENT_NAME, ERROR_TYPE, OPERATION, TOOL_NAME
from contextos_lab.loaders.trace_text import CONTENT, CONTENT_CHARS

#: The kit's three roles of a step, as GenAI operation names.
LLM, TOOL, ORCHESTRATION = "chat", "execute_tool", "invoke_agent"
#: An error text that starts with an exception's name (`RateLimitError: ...`, `KeyError('x')`).
_EXCEPTION = re.compile(r"^\s*([A-Z][A-Za-z0-9_.]*(?:Error|Exception|Timeout))\b")
#: The kit's key holding the step's role (one of the three above).
ROLE = "contextos.role"
#: Every tool's name for a kind of span (upper-cased) → the role of the step.
ROLE_OF_KIND: dict[str, str] = {
    **dict.fromkeys(
        (
            "LLM",
            "CHAT_MODEL",
            "GENERATION",
            "CHAT",
            "TEXT_COMPLETION",
            "GENERATE_CONTENT",
            "COMPLETION",
            "EMBEDDING",
            "EMBEDDINGS",
        ),
        LLM,
    ),
    **dict.fromkeys(
        ("TOOL", "RETRIEVER", "RERANKER", "EXECUTE_TOOL", "RETRIEVAL", "FUNCTION"), TOOL
    ),
    **dict.fromkeys(
        (
            "CHAIN",
            "AGENT",
            "INVOKE_AGENT",
            "CREATE_AGENT",
            "SPAN",
            "EVENT",
            "PARSER",
            "PROMPT",
            "GUARDRAIL",
            "EVALUATOR",
            "WORKFLOW",
            "TASK",
            "UNKNOWN",
        ),
        ORCHESTRATION,
    ),
}
#: Attribute names that say what kind of span this is, most specific first.
KIND_KEYS = (
    "openinference.span.kind",
    "mlflow.spanType",
    "gen_ai.operation.name",
    "traceloop.span.kind",
    "langsmith.span.kind",
)
_TOKENS_IN = ("gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens")
_TOKENS_OUT = (
    "gen_ai.usage.output_tokens",
    "llm.token_count.completion",
    "gen_ai.usage.completion_tokens",
)
_COST = ("contextos.cost", "llm.cost.total", "gen_ai.usage.cost")
_AGENT = (AGENT_NAME, "agent.name", "graph.node.id")
_TOOL = (TOOL_NAME, "tool.name", "tool_call.function.name")
#: Where a step's text is, in reading order: the input, then the output.
_TEXT_IN = (
    "input.value",
    "gen_ai.input.messages",
    "gen_ai.tool.call.arguments",
    "tool.parameters",
    "gen_ai.prompt",
)
_TEXT_OUT = (
    "output.value",
    "gen_ai.output.messages",
    "gen_ai.tool.call.result",
    "gen_ai.completion",
)
_MESSAGE_LISTS = (
    ("llm.input_messages", "message."),
    ("gen_ai.prompt", ""),
    ("llm.output_messages", "message."),
    ("gen_ai.completion", ""),
    ("retrieval.documents", "document."),
)


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested objects and lists as dotted keys (`a.b.0.c`), the form OpenInference exports;
    a key that is already dotted stays as it is, so flat and nested forms read the same."""
    out = {} if out is None else out
    if isinstance(value, Mapping) and (value or not prefix):
        for key, inner in value.items():
            flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
        for i, inner in enumerate(value):
            flatten(inner, f"{prefix}.{i}", out)
    elif prefix:
        out[prefix] = list(value) if isinstance(value, tuple) else value
    return out


def role_of(kind: Any) -> str | None:
    """The step role of a tool's span kind / run type / observation type (None: unknown)."""
    return ROLE_OF_KIND.get(str(kind).strip().upper().replace("-", "_")) if kind else None


def kind_in(attributes: Mapping[str, Any]) -> Any:
    return next((attributes[k] for k in KIND_KEYS if attributes.get(k)), None)


def text_of(value: Any) -> str:
    """A value as the text a reviewer reads (JSON for structures, never a Python repr)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) not in (None, "")), None)


def _messages(attrs: Mapping[str, Any], prefix: str, inner: str) -> list[str]:
    """`prefix.N.{inner}role` / `content` pairs as `role: content` lines, in N order."""
    found: dict[int, dict[str, Any]] = {}
    head = f"{prefix}."
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if index.isdigit() and rest.removeprefix(inner) in ("role", "content", "text"):
            found.setdefault(int(index), {})[rest.removeprefix(inner)] = value
    lines = []
    for _, parts in sorted(found.items()):
        body = text_of(parts.get("content", parts.get("text")))
        lines.append(f"{parts['role']}: {body}" if parts.get("role") else body)
    return [line for line in lines if line]


def step_text(
    attrs: Mapping[str, Any], inputs: Any = None, outputs: Any = None, error: str | None = None
) -> str:
    """The step's input, output and error as one text (input first), clipped."""
    parts: list[str] = []
    for prefix, inner in _MESSAGE_LISTS:
        parts += _messages(attrs, prefix, inner)
    if not parts:
        direct = [_first(attrs, _TEXT_IN), _first(attrs, _TEXT_OUT)]
        parts = [text_of(v) for v in direct if v not in (None, "")]
    if inputs not in (None, "", {}) and not parts:
        parts.append(f"input: {text_of(inputs)}")
    if outputs not in (None, "", {}):
        said = text_of(outputs)
        if said not in " ".join(parts):
            parts.append(f"output: {said}")
    if error:
        parts.append(f"error: {error}")
    return "\n".join(parts)[:CONTENT_CHARS]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def normalise(
    attrs: dict[str, Any],
    *,
    name: str = "",
    kind: Any = None,
    inputs: Any = None,
    outputs: Any = None,
    error: str | None = None,
    error_type: str | None = None,
) -> dict[str, Any]:
    """`attrs` (flattened, as written) plus the kit's keys where the tool gave them:
    role (from `kind` or a kind attribute), tool name, agent name, tokens, cost, text."""
    out = dict(attrs)
    role = role_of(kind) or role_of(kind_in(attrs)) or ORCHESTRATION
    out[ROLE] = role
    out.setdefault(OPERATION, role)
    tool = _first(attrs, _TOOL)
    if tool is None and role == TOOL and name:
        tool = name  # LangSmith, Langfuse and OpenInference name a tool span after its tool
    if tool is not None:
        out.setdefault(TOOL_NAME, str(tool))
    agent = _first(attrs, _AGENT)
    if agent is not None:
        out.setdefault(AGENT_NAME, str(agent))
    for key, names in (
        ("gen_ai.usage.input_tokens", _TOKENS_IN),
        ("gen_ai.usage.output_tokens", _TOKENS_OUT),
        ("contextos.cost", _COST),
    ):
        value = _number(_first(attrs, names))
        if value is not None:
            out[key] = int(value) if key.endswith("tokens") else value
    named = _EXCEPTION.match(error or "")
    error_type = error_type or (named.group(1) if named else None)
    if error_type:
        out.setdefault(ERROR_TYPE, error_type)
    out[CONTENT] = step_text(attrs, inputs, outputs, error)
    return out


__all__ = [
    "LLM",
    "ORCHESTRATION",
    "ROLE",
    "ROLE_OF_KIND",
    "TOOL",
    "flatten",
    "kind_in",
    "normalise",
    "role_of",
    "step_text",
    "text_of",
]
