"""The bundled trace loaders keep the loader contract (`contextos_lab.testing`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.loaders.exports import load_exports
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.who_and_when import load_who_and_when
from contextos_lab.testing import LoaderContract, TraceLoader
from tests.insights.attribution.traces import group_chat_run, write_runs

TESTS = Path(__file__).resolve().parents[1]


class TestTauBench(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return load_tau_bench

    @pytest.fixture
    def files(self) -> list[Path]:
        return [TESTS / "insights" / "fixtures" / "tau_bench_airline_small.json"]


class TestWhoAndWhen(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return load_who_and_when

    @pytest.fixture
    def files(self, tmp_path: Path) -> list[Path]:
        folder = write_runs(tmp_path / "runs", [group_chat_run(i) for i in range(3)])
        return sorted(folder.glob("*.json"))


class TestExports(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return load_exports

    @pytest.fixture(
        params=["otel_sdk_spans.jsonl", "langsmith_runs.jsonl", "otlp_openinference.json"]
    )
    def files(self, request: pytest.FixtureRequest) -> list[Path]:
        return [TESTS / "loaders" / "exports" / request.param]
