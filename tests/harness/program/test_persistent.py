"""Persistent harness processes: started once per worker, one batch per stdin line, and a
process that hangs or dies costs only the cases it had not answered."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.execution import ExecutionPolicy, execute
from contextos_lab.harness.runner import read_records
from contextos_lab.harness.subprocess_harness import HarnessFailure, SubprocessHarness

ROOT = Path(__file__).resolve().parents[3]
SERVER = """
import json, os, sys, time
if "--surfaces" in sys.argv:
    print(json.dumps({"version": "1", "max_concurrency": 1, "persistent": True, "surfaces": []}))
    sys.exit()
for line in sys.stdin:
    req = json.loads(line)
    for case in req["cases"]:
        if case["case_id"] == "hang":
            time.sleep(60)
        if case["case_id"] == "die":
            print("RuntimeError: lost the model connection", file=sys.stderr, flush=True)
            os._exit(3)
        print(json.dumps({"case_id": case["case_id"], "decision": str(os.getpid()),
                          "output_text": "", "tokens": 1, "latency_ms": 1}), flush=True)
    print(json.dumps({"batch_done": req["batch"]}), flush=True)
"""


@pytest.fixture
def harness(tmp_path: Path):
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(SERVER), encoding="utf-8")
    h = SubprocessHarness([sys.executable, str(path)], record_file=tmp_path / "r.jsonl")
    h.describe()
    yield h
    h.close()


def test_one_process_answers_batch_after_batch(harness: SubprocessHarness, tmp_path: Path) -> None:
    assert harness.persistent is True  # declared by the program's --surfaces object
    pids = set()
    for i in range(3):
        frame = harness.run_batch(pd.DataFrame({"case_id": [f"a{i}", f"b{i}"]}), {})
        assert frame["error"].isna().all()
        pids |= set(frame["decision"])
    assert len(pids) == 1 and harness._pool is not None and harness._pool.started == 1
    batches = [
        r for r in read_records(tmp_path / "r.jsonl").records if "[persistent]" in r.agent_note
    ]
    assert [r.exit_code for r in batches] == [0, 0, 0]
    assert all(r.stdout_lines == 3 for r in batches)  # two results and batch_done


def test_start_up_is_paid_once_per_worker(harness: SubprocessHarness) -> None:
    cases = pd.DataFrame({"case_id": [f"c{i}" for i in range(16)]})
    policy = ExecutionPolicy(max_concurrency=4, case_timeout_s=10)
    for cfg in ({"k": 1}, {"k": 2}, {"k": 3}):
        ex = execute(harness, cases, [f"h{i}" for i in range(16)], cfg, policy)
        assert ex.n_errors == 0 and ex.paid_calls == 16
    assert harness._pool is not None and 1 <= harness._pool.started <= 4
    assert ex.results["decision"].nunique() <= 4


def test_a_hung_batch_keeps_its_answers_and_the_next_batch_gets_a_new_process(
    harness: SubprocessHarness,
) -> None:
    cases = pd.DataFrame({"case_id": ["ok1", "hang", "ok2"]})
    frame = harness.run_batch(cases, {}, case_timeout_s=0.2)
    by_id = frame.set_index("case_id")
    assert pd.isna(by_id.loc["ok1", "error"])
    assert "deadline" in by_id.loc["hang", "error"] and "deadline" in by_id.loc["ok2", "error"]
    again = harness.run_batch(pd.DataFrame({"case_id": ["x"]}), {})
    assert again["error"].isna().all() and harness._pool is not None
    assert harness._pool.started == 2


def test_a_dying_process_names_its_exception(harness: SubprocessHarness) -> None:
    frame = harness.run_batch(pd.DataFrame({"case_id": ["ok", "die", "after"]}), {})
    by_id = frame.set_index("case_id")
    assert pd.isna(by_id.loc["ok", "error"])
    for cid in ("die", "after"):
        assert "exited (code 3)" in by_id.loc[cid, "error"]
        assert "RuntimeError: lost the model connection" in by_id.loc[cid, "error"]
    with pytest.raises(HarnessFailure, match="RuntimeError: lost the model connection"):
        harness.run_batch(pd.DataFrame({"case_id": ["die"]}), {})


def test_the_node_example_serves_persistently(node: str) -> None:
    harness = SubprocessHarness(
        [node, "harness.mjs", "--persistent", "--case-ms=1"], cwd=ROOT / "examples" / "node_harness"
    )
    try:
        harness.describe()
        assert harness.persistent is True and harness.per_process_concurrency == 8
        cases = pd.read_json(
            ROOT / "examples" / "standin_llm" / "sets" / "search.jsonl", lines=True
        )
        cases = cases.head(48)
        policy = ExecutionPolicy(max_concurrency=16, repeats=2, case_timeout_s=10)
        cfg = {"model": "small", "few_shot": 2, "temperature": 0.7}
        hashes = [f"h{i}" for i in range(len(cases))]
        first = execute(harness, cases, hashes, cfg, policy)
        assert harness._pool is not None
        started = harness._pool.started
        again = execute(harness, cases, hashes, cfg, policy)
        assert first.n_errors == 0 and len(first.results) == 96
        assert first.results["decision"].tolist() == again.results["decision"].tolist()
        assert started <= 4 and harness._pool.started == started  # 2 repeats x 16 / 8: reused
    finally:
        harness.close()


def test_a_process_that_stops_reading_cannot_block_past_the_deadline(tmp_path: Path) -> None:
    deaf = tmp_path / "deaf.py"
    deaf.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    harness = SubprocessHarness(
        [sys.executable, str(deaf)], record_file=tmp_path / "r.jsonl", surfaces=[],
        persistent=True, timeout=1.0,
    )  # fmt: skip
    big = pd.DataFrame({"case_id": [f"c{i}" for i in range(400)], "text": ["x" * 1000] * 400})
    try:
        with pytest.raises(HarnessFailure, match="harness hung: timeout after 1s"):
            harness.run_batch(big, {})  # 400 kB: more than a pipe holds
    finally:
        harness.close()
