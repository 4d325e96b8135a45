"""`search` tells a protocol error (exit 9, never worth a retry) from a harness that crashed
(exit 4, may be retried), and quotes the exception line, not the runtime's last words."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from contextos_lab.cli.app import main
from contextos_lab.errors import EXIT_HARNESS, EXIT_PROTOCOL

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = """
import json, sys
if "--surfaces" in sys.argv:
    print(json.dumps({"version": "1", "surfaces": [{"name": "k", "layer": "prompt",
        "kind": "int", "low": 0, "high": 3, "baseline": 1, "change_class": "additive"}]}))
    sys.exit()
req = json.load(sys.stdin)
MODE
"""
MODES = {
    "malformed": 'print("thinking...")\nprint("{not json")',
    "unknown_ids": 'print(json.dumps({"case_id": "nope", "decision": "1", "output_text": "",'
    ' "tokens": 1, "latency_ms": 1}))',
    "wrong_type": 'for c in req["cases"]:\n    print(json.dumps({"case_id": c["case_id"],'
    ' "decision": "1", "output_text": "", "tokens": None, "latency_ms": 1}))',
    "crash": 'print("booting", file=sys.stderr)\n'
    'print("ValueError: model name not set", file=sys.stderr)\n'
    'print("Node.js v20.20.2", file=sys.stderr)\nsys.exit(1)',
}


def _spec(tmp_path: Path, mode: str) -> Path:
    body = textwrap.dedent(PROGRAM).replace("MODE", MODES[mode])
    (tmp_path / "program.py").write_text(body, encoding="utf-8")
    spec = yaml.safe_load((ROOT / "examples" / "node_harness" / "spec.yaml").read_text())
    sets = ROOT / "examples" / "standin_llm" / "sets"
    spec.update(
        harness_kwargs={"argv": [sys.executable, "program.py"], "name": "program"},
        tunable_surfaces=["k"],
        search_set=str(sets / "search.jsonl"),
        heldout_test_set=str(sets / "heldout.jsonl"),
        budget=None,
        fidelity="full",
        n_trials=2,
        repeats=1,
    )
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["malformed", "unknown_ids", "wrong_type"])
def test_a_protocol_violation_exits_9(mode: str, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CONTEXTOS_FEEDBACK_RECORD", str(tmp_path / "record.jsonl"))
    code = main(["search", str(_spec(tmp_path, mode)), "--out", str(tmp_path / "out"),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_PROTOCOL, err
    assert err.startswith("error: harness protocol error:") and "runs tail" in err


def test_a_crash_exits_4_quoting_the_exception_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CONTEXTOS_FEEDBACK_RECORD", str(tmp_path / "record.jsonl"))
    code = main(["search", str(_spec(tmp_path, "crash")), "--out", str(tmp_path / "out"),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_HARNESS, err
    assert "ValueError: model name not set" in err and "Node.js" not in err
    assert "harness protocol error" not in err
    code = main(["runs", "tail", str(tmp_path / "record.jsonl"), "-n", "1", "--no-color"])
    assert code == 0 and "Node.js v20.20.2" in capsys.readouterr().out  # the whole tail
