"""`env` is merged over the kit's environment (env_clear isolates) and keys the cache."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pandas as pd

from contextos_lab.harness.execution import ExecutionPolicy, execute, harness_key
from contextos_lab.harness.result_cache import ResultCache
from contextos_lab.harness.subprocess_harness import SubprocessHarness

ENV_ECHO = """
import json, os, sys
req = json.load(sys.stdin)
seen = {k: os.environ.get(k) for k in ("PATH", "HARNESS_MODEL", "KIT_ONLY")}
for case in req["cases"]:
    print(json.dumps({"case_id": case["case_id"], "decision": "d",
                      "output_text": json.dumps(seen), "tokens": 1, "latency_ms": 1}))
"""


def _harness(tmp_path: Path, **kwargs: object) -> SubprocessHarness:
    path = tmp_path / "env_echo.py"
    path.write_text(textwrap.dedent(ENV_ECHO), encoding="utf-8")
    return SubprocessHarness(
        [sys.executable, str(path)], record_file=tmp_path / "r.jsonl", surfaces=[], **kwargs
    )


def _seen(harness: SubprocessHarness) -> dict[str, str | None]:
    frame = harness.run_batch(pd.DataFrame({"case_id": ["a"]}), {})
    return json.loads(frame["output_text"][0])


def test_env_is_merged_over_the_kits_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KIT_ONLY", "from-the-shell")
    seen = _seen(_harness(tmp_path, env={"HARNESS_MODEL": "m-2"}))
    assert seen["HARNESS_MODEL"] == "m-2"
    assert seen["KIT_ONLY"] == "from-the-shell"  # API keys, HOME and friends stay visible
    assert seen["PATH"] == os.environ["PATH"]


def test_env_clear_isolates(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KIT_ONLY", "from-the-shell")
    seen = _seen(_harness(tmp_path, env={"HARNESS_MODEL": "m-2"}, env_clear=True))
    assert seen == {"PATH": None, "HARNESS_MODEL": "m-2", "KIT_ONLY": None}


def test_the_cache_key_hashes_command_and_declared_env(tmp_path: Path, monkeypatch) -> None:
    a = _harness(tmp_path, env={"HARNESS_MODEL": "m-1"}, version="1")
    b = _harness(tmp_path, env={"HARNESS_MODEL": "m-2"}, version="1")
    same_as_a = _harness(tmp_path, env={"HARNESS_MODEL": "m-1"}, version="1")
    assert harness_key(a) != harness_key(b)
    monkeypatch.setenv("SOME_ROTATED_KEY", "x")  # the kit's own environment never keys it
    assert harness_key(a) == harness_key(same_as_a)
    cache = ResultCache(f"sqlite:///{tmp_path / 'cache.db'}")
    cases = pd.DataFrame({"case_id": ["a", "b"]})
    policy = ExecutionPolicy()
    assert execute(a, cases, ["h1", "h2"], {}, policy, cache).paid_calls == 2
    assert execute(same_as_a, cases, ["h1", "h2"], {}, policy, cache).paid_calls == 0
    assert execute(b, cases, ["h1", "h2"], {}, policy, cache).paid_calls == 2
