"""The simple case format: JSONL/YAML/CSV in, search/held-out JSONL out, clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.cli.app import main
from contextos_lab.evaluators.assertions import evaluate, holds
from contextos_lab.harness.case_format import CaseFormatError, convert, read_cases


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


CASES = [
    {"id": f"q{i}", "vars": {"question": f"{i}+1?"}, "assert": [{"type": "equals", "value": i + 1}]}
    for i in range(20)
]


def test_jsonl_converts_to_disjoint_sets(tmp_path: Path) -> None:
    done = convert(_write(tmp_path / "c.jsonl", CASES), tmp_path / "sets", heldout_share=0.4)
    search = pd.read_json(done.search, lines=True)
    heldout = pd.read_json(done.heldout, lines=True)
    assert done.n_search + done.n_heldout == 20
    assert not set(search["case_id"]) & set(heldout["case_id"])
    assert {"case_id", "question", "assert"} <= set(search.columns)
    again = convert(tmp_path / "c.jsonl", tmp_path / "sets2", heldout_share=0.4)
    assert again.search.read_text() == done.search.read_text()  # stable split


def test_yaml_and_csv(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "- id: a\n  vars: {q: hi}\n  assert: [{type: contains, value: hi}]\n", encoding="utf-8"
    )
    assert read_cases(tmp_path / "c.yaml")[0].asserts[0].type == "contains"
    (tmp_path / "c.csv").write_text(
        "id,question,__expected\nx,What?,contains: yes\ny,Why?,regex: ^b\n", encoding="utf-8"
    )
    cases = read_cases(tmp_path / "c.csv")
    assert cases[0].vars == {"question": "What?"}
    assert cases[1].asserts[0].type == "regex" and cases[1].asserts[0].value == "^b"


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("not json", "c.jsonl:2: (line)"),
        ('{"vars": {}, "assert": [{"type": "bogus"}]}', "c.jsonl:2: assert.0.type"),
        ('{"id": "q0", "vars": {}}', "c.jsonl:2: id: duplicate"),
        ('{"vars": {"case_id": 1}}', "c.jsonl:2: vars"),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path: Path, line: str, where: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(CASES[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match=re.escape(where)):
        read_cases(path)


def test_cli_import_and_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _write(tmp_path / "c.jsonl", CASES)
    assert main(["cases", "import", str(src), "--out", str(tmp_path / "s")]) == 0
    bad = tmp_path / "bad.txt"
    bad.write_text("x", encoding="utf-8")
    assert main(["cases", "import", str(bad), "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err


def test_assertion_kinds() -> None:
    assert holds({"type": "equals", "value": 4}, " 4 ", "")
    assert holds({"type": "icontains", "value": "YES"}, "oh yes", "")
    assert not holds({"type": "not-contains", "value": "@"}, "a@b", "")
    assert holds({"type": "regex", "value": r"^\d+$"}, "", "42") is False
    assert holds({"type": "regex", "value": r"^\d+$", "target": "decision"}, "", "42")
    assert holds({"type": "is-json"}, '{"a": 1}', "")
    assert holds({"type": "json-field", "path": "a.b", "value": 2}, '{"a": {"b": 2}}', "")
    assert not holds({"type": "json-field", "path": "a.c", "value": 2}, '{"a": {"b": 2}}', "")


@given(st.text(max_size=30), st.text(max_size=10))
def test_contains_and_not_contains_are_complements(text: str, needle: str) -> None:
    assert holds({"type": "contains", "value": needle}, text, "") != holds(
        {"type": "not-contains", "value": needle}, text, ""
    )


def test_evaluate_scores_each_metric() -> None:
    cases = pd.DataFrame(
        {
            "case_id": ["a", "b"],
            "assert": [
                [{"type": "equals", "value": "4", "target": "decision"}],
                [
                    {"type": "equals", "value": "5", "target": "decision"},
                    {"type": "not-contains", "value": "x@y", "metric": "safety"},
                ],
            ],
        }
    )
    results = pd.DataFrame(
        {
            "case_id": ["a", "b"],
            "decision": ["4", "6"],
            "output_text": ["4", "mail x@y"],
            "tokens": [1000, 1000],
            "tokens_out": [0, 0],
            "latency_ms": [10.0, 20.0],
        }
    )
    frame = evaluate(cases, results)
    assert frame["utility"].tolist() == [1.0, 0.0]
    assert frame["safety"].tolist() == [1.0, 0.0]
    assert frame["policy"].tolist() == [1.0, 1.0]
    assert frame["latency"].tolist() == [10.0, 20.0]


def test_cases_without_assert_use_the_common_expectation_fields() -> None:
    cases = pd.DataFrame(
        {
            "case_id": ["a", "b"],
            "expected_decision": ["approve", "deny"],
            "forbidden_strings": [("4111",), ()],
        }
    )
    results = pd.DataFrame(
        {
            "case_id": ["a", "b"],
            "decision": ["approve", "approve"],
            "output_text": ["card 4111", "ok"],
            "tokens": [1, 1],
            "tokens_out": [0, 0],
            "latency_ms": [1.0, 1.0],
        }
    )
    frame = evaluate(cases, results)
    assert frame["utility"].tolist() == [1.0, 0.0]
    assert frame["safety"].tolist() == [0.0, 1.0]


def test_import_never_splits_a_content_duplicate(tmp_path) -> None:
    """Copies under new ids (one with a trailing space) are kept once, so the gate's overlap
    check finds nothing between the two sets."""
    import json

    from contextos_lab.autotune.cases import load_case_set, overlap
    from contextos_lab.harness.case_format import convert

    rows = []
    for n in range(30):
        check = [{"type": "equals", "target": "decision", "value": str(n + 1)}]
        case = {"vars": {"question": f"What is {n} + 1?"}, "assert": check}
        rows.append({"id": f"q{n}", **case})
        rows.append({"id": f"copy{n}", **case})
    rows.append(
        {"id": "spaced", "vars": {"question": "What is 0 + 1? "}, "assert": rows[0]["assert"]}
    )
    src = tmp_path / "cases.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = convert(src, tmp_path / "sets", heldout_share=0.5, seed=0)
    assert len(done.duplicates) == 31 and done.n_search + done.n_heldout == 30
    search, heldout = load_case_set(done.search), load_case_set(done.heldout)
    assert overlap(search, heldout) == []
