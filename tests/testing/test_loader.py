"""The bundled trace loaders, looked up by name or path in `loaders.registry`, keep the
loader contract (`contextos_lab.testing`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.loaders.registry import get_loader
from contextos_lab.testing import LoaderContract, TraceLoader
from tests.insights.attribution.traces import group_chat_run, write_runs

TESTS = Path(__file__).resolve().parents[1]


class TestTauBench(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return get_loader("tau-bench")

    @pytest.fixture
    def files(self) -> list[Path]:
        return [TESTS / "insights" / "fixtures" / "tau_bench_airline_small.json"]


class TestWhoAndWhen(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return get_loader("who-and-when")

    @pytest.fixture
    def files(self, tmp_path: Path) -> list[Path]:
        folder = write_runs(tmp_path / "runs", [group_chat_run(i) for i in range(3)])
        return sorted(folder.glob("*.json"))


class TestExports(LoaderContract):
    @pytest.fixture
    def loader(self) -> TraceLoader:
        return get_loader("contextos_lab.loaders.exports:load_exports")

    @pytest.fixture(
        params=["otel_sdk_spans.jsonl", "langsmith_runs.jsonl", "otlp_openinference.json"]
    )
    def files(self, request: pytest.FixtureRequest) -> list[Path]:
        return [TESTS / "loaders" / "exports" / request.param]
