"""Every bundled harness and example keeps the harness contract (`contextos_lab.testing`): the
reference harness (a BaseHarness), the stand-in LLM (a plain Protocol object, seeded), the
Python example program, and the Node and Perl programs, one process per chunk and persistent.
Node and Perl skip with a message when absent; under CI=true their absence fails."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.reference import SupportDeskHarness
from contextos_lab.harness.subprocess_harness import SubprocessHarness
from contextos_lab.testing import HarnessContract, HarnessFactory, ProgramHarnessContract

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "examples" / "standin_llm"
PERL = ROOT / "tests" / "harness" / "program" / "programs" / "harness.pl"
ARITHMETIC = ["question", "a", "b", "op", "difficulty"]


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {name} is not installed")
        pytest.skip(f"{name} is not installed: its harness contract is not checked")
    return path


def _arithmetic(n: int = 4) -> pd.DataFrame:
    return pd.read_json(STANDIN / "sets" / "search.jsonl", lines=True).head(n)


class TestReferenceHarness(HarnessContract):
    @pytest.fixture
    def harness(self) -> HarnessFactory:
        return SupportDeskHarness

    @pytest.fixture
    def cases(self, search_cases: pd.DataFrame) -> pd.DataFrame:
        return search_cases.head(6)


class TestStandInLLM(HarnessContract):
    @pytest.fixture
    def harness(self) -> HarnessFactory:
        sys.path.insert(0, str(STANDIN))
        try:
            from standin_llm import StandInLLM
        finally:
            sys.path.remove(str(STANDIN))
        return lambda: StandInLLM(time_scale=0)

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        return _arithmetic()

    @pytest.fixture
    def failing_case(self) -> dict[str, object]:
        return {"case_id": "bad", "question": "?", "op": "/", "a": 1, "b": 0}  # no such op


class TestPythonProgram(ProgramHarnessContract):
    @pytest.fixture
    def harness(self) -> HarnessFactory:
        argv = [sys.executable, str(ROOT / "examples" / "external_harness" / "harness.py")]
        return lambda: SubprocessHarness(argv, name="example", version="1", timeout=60)

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        path = ROOT / "examples" / "external_harness" / "cases.jsonl"
        return pd.read_json(path, lines=True).head(4)


@pytest.mark.parametrize("persistent", [False, True], ids=["per-chunk", "persistent"])
class TestNodeProgram(ProgramHarnessContract):
    @pytest.fixture
    def harness(self, persistent: bool) -> HarnessFactory:
        node = _binary("node")
        argv = [node, str(ROOT / "examples" / "node_harness" / "harness.mjs"), "--case-ms=1"]
        argv += ["--persistent"] if persistent else []
        return lambda: SubprocessHarness(argv, name="node", input_fields=ARITHMETIC, timeout=60)

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        return _arithmetic()


@pytest.mark.parametrize("persistent", [False, True], ids=["per-chunk", "persistent"])
class TestPerlProgram(ProgramHarnessContract):
    @pytest.fixture
    def harness(self, persistent: bool) -> HarnessFactory:
        perl = _binary("perl")
        argv = [perl, str(PERL), *(["--persistent"] if persistent else [])]
        return lambda: SubprocessHarness(argv, name="perl", input_fields=ARITHMETIC, timeout=60)

    @pytest.fixture
    def cases(self) -> pd.DataFrame:
        return _arithmetic()
