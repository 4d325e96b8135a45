"""No answer key reaches a program harness: an allow-list (spec `input_fields`, or the case
format's `inputs.json`) decides what is sent, and without one every answer-key-like name is
held back, nested ones included. The case file here is stuffed with every such name."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from contextos_lab.autotune.cases import load_case_set
from contextos_lab.autotune.context import prepare
from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.harness.case_inputs import INPUTS_FILE, answer_key_like
from contextos_lab.harness.execution import ExecutionPolicy, execute
from contextos_lab.harness.subprocess_harness import SubprocessHarness

ROOT = Path(__file__).resolve().parents[3]
INPUTS = {"question": "What is 2 + 3?", "a": 2, "b": 3}
#: Every answer-key-like name a flat case file has been seen to carry (issue #31), and more.
ANSWER_KEYS = [
    "expected_answer", "expected_output", "expected", "expected_decision", "expectations",
    "golden", "golden_answer", "gold", "label", "labels", "answer", "ideal", "reference",
    "reference_answer", "ground_truth", "solution", "target", "correct_answer", "assert",
    "key_evidence", "forbidden_strings", "rubric", "score",
]  # fmt: skip
ECHO = """
import json, sys
if "--surfaces" in sys.argv:
    print(json.dumps({"version": "1", "surfaces": [{"name": "k", "layer": "prompt",
        "kind": "int", "low": 0, "high": 3, "baseline": 1, "change_class": "additive"}]}))
    sys.exit()
raw = sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as fh:
    fh.write(raw + "\\n")
for case in json.loads(raw)["cases"]:
    print(json.dumps({"case_id": case["case_id"], "decision": "5", "output_text": "5",
                      "tokens": 1, "latency_ms": 1}))
"""


def _stuffed(i: int) -> dict[str, object]:
    row: dict[str, object] = {"case_id": f"q{i}", **INPUTS}
    row.update({name: f"SECRET-{name}-{i}" for name in ANSWER_KEYS})
    row["metadata"] = {"source": "faq", "expected_decision": f"SECRET-meta-{i}"}
    return row


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / "sets" / "search.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(_stuffed(i)) + "\n" for i in range(6)), encoding="utf-8")
    heldout = tmp_path / "sets" / "heldout.jsonl"
    heldout.write_text(
        "".join(json.dumps(_stuffed(i)) + "\n" for i in range(10, 14)), encoding="utf-8"
    )
    return path


def _sent(log: Path) -> str:
    return log.read_text(encoding="utf-8")


def _leaks(raw: str) -> list[str]:
    return [name for name in ANSWER_KEYS if f'"{name}"' in raw] + (
        ["SECRET"] if "SECRET" in raw else []
    )


def _run(harness: SubprocessHarness, case_file: Path) -> None:
    cases = load_case_set(case_file)
    ex = execute(harness, cases.cases, list(cases.case_hashes), {"k": 1}, ExecutionPolicy())
    assert ex.n_errors == 0


def _echo(tmp_path: Path, log: Path, **kwargs: object) -> SubprocessHarness:
    script = tmp_path / "echo.py"
    script.write_text(textwrap.dedent(ECHO), encoding="utf-8")
    return SubprocessHarness(
        [sys.executable, str(script), str(log)], record_file=tmp_path / "r.jsonl", **kwargs
    )


def test_every_stuffed_name_looks_like_an_answer_key() -> None:
    assert all(answer_key_like(n) for n in ANSWER_KEYS)
    assert not any(answer_key_like(n) for n in ("question", "a", "b", "metadata", "case_id"))


def test_the_spec_allow_list_sends_declared_inputs_only(tmp_path: Path, case_file: Path) -> None:
    log = tmp_path / "stdin.log"
    _run(_echo(tmp_path, log, input_fields=["question", "a", "b"]), case_file)
    raw = _sent(log)
    assert _leaks(raw) == [] and "metadata" not in raw
    (request,) = [json.loads(line) for line in raw.splitlines() if line]
    assert all(set(c) == {"case_id", "question", "a", "b"} for c in request["cases"])


def test_without_a_declaration_no_answer_key_like_name_is_sent(
    tmp_path: Path, case_file: Path
) -> None:
    log = tmp_path / "stdin.log"
    _run(_echo(tmp_path, log), case_file)
    raw = _sent(log)
    assert _leaks(raw) == []
    cases = json.loads(raw.splitlines()[0])["cases"]
    assert cases[0]["metadata"] == {"source": "faq"}  # the nested answer key is dropped
    assert cases[0]["question"] == INPUTS["question"]


def test_a_spec_run_uses_the_case_formats_inputs_json(tmp_path: Path, case_file: Path) -> None:
    (case_file.parent / INPUTS_FILE).write_text(
        json.dumps({"input_fields": ["question", "a", "b"]}), encoding="utf-8"
    )
    log = tmp_path / "stdin.log"
    (tmp_path / "echo.py").write_text(textwrap.dedent(ECHO), encoding="utf-8")
    spec = yaml.safe_load((ROOT / "examples" / "node_harness" / "spec.yaml").read_text())
    spec.update(
        harness_kwargs={"argv": [sys.executable, "echo.py", str(log)], "name": "echo"},
        tunable_surfaces=["k"],
        search_set="sets/search.jsonl",
        heldout_test_set="sets/heldout.jsonl",
        budget=None,
        target={"intent": "*", "metric": "utility", "direction": "increase"},
    )
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    ctx = prepare(load_spec(tmp_path / "spec.yaml"))
    assert tuple(ctx.harness.input_fields) == ("question", "a", "b")
    cases = ctx.search
    execute(ctx.harness, cases.cases, list(cases.case_hashes), {"k": 1}, ExecutionPolicy())
    raw = _sent(log)
    assert _leaks(raw) == [] and "metadata" not in raw
    assert len(pd.read_json(case_file, lines=True).columns) > 20  # the file really was stuffed
