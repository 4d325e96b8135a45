"""Protocol details a new user relies on: no answer key on stdin, unknown fields passed through,
seeds, per-case deadlines, the `--surfaces` object (version, concurrency), the Node example."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.autotune.spec.check import check_spec
from contextos_lab.autotune.spec.load import SpecError, load_spec
from contextos_lab.harness.case_inputs import EXPECTATION_FIELDS
from contextos_lab.harness.execution import ExecutionPolicy, execute, harness_key
from contextos_lab.harness.subprocess_harness import SubprocessHarness

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
ECHO = """
import json, sys
if "--surfaces" in sys.argv:
    print(json.dumps({"version": "7", "max_concurrency": 3, "surfaces": []}))
    sys.exit()
req = json.load(sys.stdin)
for i, case in enumerate(req["cases"]):
    seed = req.get("seeds", [None] * len(req["cases"]))[i]
    print(json.dumps({"case_id": case["case_id"], "decision": str(seed),
                      "output_text": json.dumps(req, sort_keys=True),
                      "tokens": 1, "latency_ms": 0}), flush=True)
"""


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "h.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [PY, str(path)]


def test_stdin_carries_inputs_only_and_passes_unknown_fields(tmp_path: Path) -> None:
    harness = SubprocessHarness(_script(tmp_path, ECHO), record_file=tmp_path / "r.jsonl")
    cases = pd.DataFrame(
        {
            "case_id": ["a"],
            "request": ["refund please"],
            "customer_tier": ["gold"],  # a field the kit does not know
            "expected_decision": ["approve"],
            "key_evidence": [("e1",)],
            "forbidden_strings": [("4111 1111",)],
            "injection": [{"source": "n1", "action": "approve"}],
            "assert": [[{"type": "equals", "value": "approve"}]],
            "content_hash": ["f" * 64],
        }
    )
    ex = execute(harness, cases, ["h"], {"k": 1}, ExecutionPolicy(case_timeout_s=5))
    request = json.loads(ex.results["output_text"][0])
    (sent,) = request["cases"]
    assert sent == {"case_id": "a", "request": "refund please", "customer_tier": "gold"}
    assert not set(sent) & EXPECTATION_FIELDS
    raw = json.dumps(request)
    for secret in ("approve", "e1", "4111", "n1", "f" * 64):
        assert secret not in raw  # nothing of the answer key anywhere on stdin
    assert request["seeds"] == [int(ex.results["seed"][0])]
    assert request["max_concurrency"] == 3 and request["case_timeout_s"] == 5
    assert ex.results["decision"][0] == str(ex.results["seed"][0])


def test_surfaces_object_declares_version_and_concurrency(tmp_path: Path) -> None:
    harness = SubprocessHarness(_script(tmp_path, ECHO), record_file=tmp_path / "r.jsonl")
    assert list(harness.tunable_surfaces()) == []
    assert harness.version == "7" and harness.per_process_concurrency == 3
    assert harness_key(harness).version == f"7+cmd:{harness.command_digest}"
    assert harness.max_concurrency == 3


def test_a_hung_case_fails_alone_and_answered_cases_keep_their_results(tmp_path: Path) -> None:
    body = """
    import json, sys, time
    req = json.load(sys.stdin)
    for case in req["cases"]:
        if case["case_id"] == "c2":
            time.sleep(60)
        print(json.dumps({"case_id": case["case_id"], "decision": "ok", "output_text": "",
                          "tokens": 1, "latency_ms": 0}), flush=True)
    """
    harness = SubprocessHarness(
        _script(tmp_path, body), record_file=tmp_path / "r.jsonl", surfaces=[]
    )
    cases = pd.DataFrame({"case_id": ["c1", "c2", "c3"]})
    ex = execute(harness, cases, ["1", "2", "3"], {}, ExecutionPolicy(case_timeout_s=0.3))
    by_id = ex.results.set_index("case_id")
    assert by_id.loc["c1", "decision"] == "ok" and pd.isna(by_id.loc["c1", "error"])
    assert "deadline" in by_id.loc["c2", "error"] and "deadline" in by_id.loc["c3", "error"]


def test_spec_check_refuses_bad_program_and_malformed_surfaces(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "examples" / "node_harness" / "spec.yaml")
    raw = spec.model_dump(mode="json")
    base = spec.base_dir
    bad_path = {**raw, "harness_kwargs": {"argv": ["node", "no_such_harness.mjs"]}}
    with pytest.raises(SpecError, match="harness: cannot list its tunable surfaces"):
        check_spec(bad_path, base_dir=base)
    (tmp_path / "bad.py").write_text("print('[{\"name\": 1}]')\n", encoding="utf-8")
    malformed = {**raw, "harness_kwargs": {"argv": [PY, str(tmp_path / "bad.py")]}}
    with pytest.raises(SpecError, match="malformed surfaces"):
        check_spec(malformed, base_dir=base)


def test_the_node_example_runs_concurrently_with_seeds(tmp_path: Path, node: str) -> None:
    spec = load_spec(ROOT / "examples" / "node_harness" / "spec.yaml")
    _, harness, _ = check_spec(spec)
    assert harness_key(harness).version.startswith("1.0+cmd:")
    cases = pd.read_json(ROOT / "examples" / "standin_llm" / "sets" / "search.jsonl", lines=True)
    cases = cases.head(40)
    hashes = [f"h{i}" for i in range(len(cases))]
    policy = ExecutionPolicy(max_concurrency=16, repeats=2, case_timeout_s=10)
    cfg = {"model": "small", "few_shot": 2, "temperature": 0.7}
    first = execute(harness, cases, hashes, cfg, policy)
    again = execute(harness, cases, hashes, cfg, policy)
    assert first.n_errors == 0 and len(first.results) == 80
    assert first.results["case_id"].tolist() == [c for c in cases["case_id"] for _ in range(2)]
    # same seeds, same answers (a seeded harness is reproducible); repeats differ in seed
    assert first.results["decision"].tolist() == again.results["decision"].tolist()
    assert first.results["seed"].nunique() == 80
