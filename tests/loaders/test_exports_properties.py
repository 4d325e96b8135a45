"""Property tests for the export readers (issue 45): a malformed row never sinks its file and
is quarantined alone at its own line; a partial row (optional fields dropped) still loads; a
partial or malformed annotation never rejects a Who&When run."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.loaders.exports import load_exports, rows_of
from contextos_lab.loaders.who_and_when import load_who_and_when

HERE = Path(__file__).parent / "exports"
PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Each reader's fixture (JSON rows) and the fields its tool documents as optional.
SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "otel-sdk": (
        "otel_sdk_spans.jsonl",
        ("end_time", "status", "attributes", "events", "links", "resource", "kind", "parent_id"),
    ),
    "phoenix": (
        "phoenix_spans_nested.json",
        ("end_time", "status_code", "status_message", "attributes", "events", "span_kind", "id"),
    ),
    "langfuse": (
        "langfuse_traces.json",
        ("input", "output", "sessionId", "userId", "tags", "metadata", "latency", "scores", "name"),
    ),
    "langsmith": (
        "langsmith_runs.jsonl",
        (
            "end_time",
            "outputs",
            "error",
            "inputs",
            "extra",
            "tags",
            "dotted_order",
            "session_id",
            "status",
            "prompt_tokens",
            "completion_tokens",
            "total_cost",
        ),
    ),
    "mlflow": ("mlflow_traces.json", ("info",)),
}
ROWS = {kind: [row for _, row in rows_of(HERE / name)] for kind, (name, _) in SHAPES.items()}
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _write(rows: list[Any]) -> Path:
    path = Path(tempfile.mkdtemp()) / "export"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _mutate(data: st.DataObject, value: Any) -> Any:
    """`value` with one field somewhere in it deleted or replaced by any JSON value."""
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        out = dict(value)
        action = data.draw(st.sampled_from(["delete", "replace", "descend"]))
        if action == "delete":
            del out[key]
        elif action == "replace":
            out[key] = data.draw(json_values)
        else:
            out[key] = _mutate(data, value[key])
        return out
    if isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], _mutate(data, value[i]), *value[i + 1 :]]
    return data.draw(json_values)


@PROPS
@given(kind=st.sampled_from(sorted(SHAPES)), data=st.data())
def test_a_malformed_row_is_quarantined_alone_and_never_sinks_the_file(kind, data) -> None:
    rows = list(ROWS[kind])
    at = data.draw(st.integers(0, len(rows) - 1))
    rows[at] = _mutate(data, rows[at])
    result = load_exports([_write(rows)])  # never raises
    assert all(q.line == at + 1 and q.message and q.file for q in result.quarantined)
    assert len(result.quarantined) <= 1
    assert len(result.records) >= 3  # the runs the row is not part of all load
    assert {r.trace_id for r in result.records} == {t.trace_id for t in result.traces}


@PROPS
@given(kind=st.sampled_from(sorted(SHAPES)), data=st.data())
def test_a_row_without_its_optional_fields_still_loads(kind, data) -> None:
    optional = SHAPES[kind][1]
    dropped = set(data.draw(st.lists(st.sampled_from(optional), unique=True)))
    rows = [{k: v for k, v in row.items() if k not in dropped} for row in ROWS[kind]]
    result = load_exports([_write(rows)])
    assert not result.quarantined and len(result.records) == 4


ANNOTATION = ("mistake_agent", "mistake_step", "mistake_reason")
annotation_values = st.one_of(
    st.just("<absent>"),
    st.none(),
    st.just(""),
    st.just("3"),
    st.integers(-5, 5),
    st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@PROPS
@given(values=st.tuples(*(annotation_values for _ in ANNOTATION)))
def test_a_partial_or_malformed_annotation_never_rejects_the_run(values) -> None:
    row = json.loads((HERE / "who_and_when_partial.json").read_text())[0]
    row = {k: v for k, v in row.items() if k not in ANNOTATION}
    row.update({k: v for k, v in zip(ANNOTATION, values, strict=True) if v != "<absent>"})
    result = load_who_and_when(_write([row]))
    assert not result.quarantined and len(result.records) == 1
    inputs = result.records[0].inputs
    missing = inputs["annotation_missing"]
    kept = {k: inputs[k] for k in ANNOTATION if inputs[k] is not None}
    if inputs["annotated"]:  # every field is either kept or reported missing, never both
        assert set(kept) | set(missing) == set(ANNOTATION) and not set(kept) & set(missing)
