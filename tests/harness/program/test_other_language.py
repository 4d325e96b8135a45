"""The protocol assumes no language: a Perl harness (programs/harness.pl, written from the
README only) is run per chunk and persistent, gets only declared inputs, has its `cost_usd`
priced, and its failures are told apart (a `die` is retryable and quoted, bad JSON is a
protocol error). Perl is in every Debian base image (perl-base is essential): under CI=true its
absence fails the test, elsewhere it skips with a message."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.execution import ExecutionPolicy, error_mask, execute
from contextos_lab.harness.subprocess_harness import SubprocessHarness

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SETS = ROOT / "examples" / "standin_llm" / "sets"


@pytest.fixture
def perl() -> str:
    path = shutil.which("perl")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but perl is not installed (perl-base is essential on Debian)")
        pytest.skip("perl is not installed")
    return path


def _run(tmp_path: Path, *, persistent: bool, mode: str = "ok", n: int = 12) -> pd.DataFrame:
    argv = ["perl", str(HERE / "programs" / "harness.pl")]
    argv += ["--persistent"] if persistent else []
    harness = SubprocessHarness(
        argv, name="perl", env={"PERL_H_MODE": mode}, record_file=tmp_path / "records.jsonl",
        input_fields=["question", "a", "b", "op"], timeout=30,
    )  # fmt: skip
    cases = pd.read_json(SETS / "search.jsonl", lines=True).head(n)
    try:
        policy = ExecutionPolicy(max_concurrency=4, cache=False)
        return execute(harness, cases, [f"h{i}" for i in range(n)], {"care": 2}, policy).results
    finally:
        harness.close()


@pytest.mark.parametrize("persistent", [False, True])
def test_a_perl_harness_answers_with_declared_inputs_only(
    perl: str, tmp_path: Path, persistent: bool
) -> None:
    results = _run(tmp_path, persistent=persistent)
    assert not error_mask(results).any()
    assert len(results) == 12 and results["cost_usd"].tolist() == [0.003] * 12
    seen = {a["seen"] for a in results["attributes"]}  # unknown fields kept as attributes
    assert seen == {"a,b,case_id,op,question"}  # never `assert`, `difficulty` or `email`


@pytest.mark.parametrize("persistent", [False, True])
def test_a_perl_die_is_quoted_and_bad_json_is_a_protocol_error(
    perl: str, tmp_path: Path, persistent: bool
) -> None:
    died = _run(tmp_path, persistent=persistent, mode="die", n=4)["error"].tolist()
    assert all("no model configured for q" in e and "line" in e for e in died)
    assert not any("harness protocol error" in e for e in died)
    bad = _run(tmp_path, persistent=persistent, mode="badjson", n=4)["error"].tolist()
    assert all("harness protocol error" in e and "malformed JSON" in e for e in bad)
