"""Result lines: whatever a program prints, every case gets exactly one row, and a valid answer
is never lost to another line's fault."""

from __future__ import annotations

import json

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.harness.program.result_lines import PROTOCOL_ERROR, ResultLines
from contextos_lab.harness.protocol import Fault, RunResult, fault_of

IDS = ["c1", "c2", "c3"]


def _good(case_id: str) -> str:
    return json.dumps(
        {"case_id": case_id, "decision": "d", "output_text": "", "tokens": 1, "latency_ms": 2}
    )


_line = st.one_of(
    st.sampled_from([*IDS, "zz"]).map(_good),
    st.text(max_size=30),
    st.dictionaries(st.sampled_from(["case_id", "decision", "tokens", "latency_ms", "x"]),
                    st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3))).map(json.dumps),
)  # fmt: skip


@given(st.lists(_line, max_size=12))
def test_every_case_gets_one_row_and_first_valid_answers_survive(lines: list[str]) -> None:
    parsed = ResultLines(IDS)
    first_valid: dict[str, int] = {}
    for i, line in enumerate(lines):
        before = set(parsed.rows)
        parsed.feed(line)
        for c in set(parsed.rows) - before:
            first_valid[c] = i
    rows = parsed.rows_for(IDS, "missing")
    assert [r["case_id"] for r in rows] == IDS
    for row in rows:
        if row["case_id"] in first_valid:
            assert row["error"] is None and row["decision"] == "d"
        else:
            assert row["error"] and row["latency_ms"] is None
            assert row["error"] == "missing" or row["error"].startswith(PROTOCOL_ERROR)
            # the fault is typed where it is detected: a refused line, never a missing one
            assert (row["fault"] is Fault.protocol) == (row["error"] != "missing")
    assert parsed.complete(IDS) == (not parsed.problems and len(first_valid) == len(IDS))


def test_an_errored_line_has_no_latency_even_if_it_sent_one() -> None:
    parsed = ResultLines(["c1"])
    parsed.feed(json.dumps({"case_id": "c1", "decision": "", "output_text": "", "tokens": 0,
                            "latency_ms": 0, "error": "rate limited"}))  # fmt: skip
    (row,) = parsed.rows_for(["c1"], "missing")
    assert row["error"] == "rate limited" and row["latency_ms"] is None


def test_a_null_latency_on_an_answered_line_is_a_protocol_error() -> None:
    parsed = ResultLines(["c1"])
    parsed.feed(json.dumps({"case_id": "c1", "decision": "d", "output_text": "", "tokens": 0,
                            "latency_ms": None}))  # fmt: skip
    (row,) = parsed.rows_for(["c1"], "missing")
    assert row["error"].startswith(PROTOCOL_ERROR) and "latency_ms" in row["error"]
    assert row["fault"] is Fault.protocol


def test_the_words_of_a_programs_error_decide_no_fault() -> None:
    """A program's own error quoting the phrase, or sending a `fault` field, is the program's
    error: only the kit types a protocol fault (the field goes under `attributes`)."""
    parsed = ResultLines(["c1"])
    parsed.feed(json.dumps({"case_id": "c1", "decision": "", "output_text": "", "tokens": 0,
                            "latency_ms": None, "error": f"{PROTOCOL_ERROR}: upstream said so",
                            "fault": "protocol"}))  # fmt: skip
    (row,) = parsed.rows_for(["c1"], "missing", missing_fault=None)
    assert row["fault"] is None and row["attributes"] == {"fault": "protocol"}


def test_a_result_stored_before_the_fault_field_reads_as_no_fault() -> None:
    """Cached results and run layouts written before `fault` existed lack it: read, not
    refused, and never a protocol fault (even when their reason quotes the phrase)."""
    old = {"case_id": "c1", "decision": "", "output_text": "", "tokens": 0, "latency_ms": None,
           "wall_ms": 0.0, "error": f"{PROTOCOL_ERROR}: line 1"}  # fmt: skip
    assert RunResult.model_validate(old).fault is None
    frame = pd.DataFrame([old, {**old, "fault": Fault.protocol}])  # a cache read beside new rows
    assert [fault_of(f) for f in frame["fault"]] == [None, Fault.protocol]
