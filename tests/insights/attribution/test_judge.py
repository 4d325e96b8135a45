"""The LLM judge adapter against a stub chat-completions server on 127.0.0.1 (no network):
it sends only the kit's candidates and the run's signals, takes the judge's pick, caches,
stays within its call budget and keeps the kit's attribution when the judge fails."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from contextos_lab.cli.app import main
from contextos_lab.errors import EXIT_HARNESS, ExitError, UserError
from contextos_lab.harness.result_cache import ResultCache
from contextos_lab.insights.attribution import RunTrace, Turn, get_attributor
from contextos_lab.insights.attribution.judge import ChatJudge
from tests.insights.attribution.traces import annotate, group_chat_run, write_runs

SECRET = "ZEBRA-ONLY-IN-A-TOOL-TURN"


class _Stub(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    headers_seen: ClassVar[list[str]] = []
    #: which candidate to name: "second", "bogus", "prose"; "refuse": answer 401
    pick: ClassVar[str] = "second"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        type(self).headers_seen.append(self.headers.get("Authorization", ""))
        if self.pick == "refuse":
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        candidates = json.loads(body["messages"][-1]["content"])["candidates"]
        step = {"second": candidates[1]["step"], "bogus": 999}.get(self.pick)
        content = (
            "I cannot say." if step is None else json.dumps({"step": step, "reason": "it guessed"})
        )
        reply = {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Stub.requests, _Stub.headers_seen, _Stub.pick = [], [], "second"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _run(i: int) -> RunTrace:
    return RunTrace(
        f"r{i}",
        (
            Turn(0, "Planner_Expert", f"Task {i}: count the rows, then report the total."),
            Turn(1, "Coder_Expert", "```python\nprint(len(open('t.csv').readlines()))\n```"),
            Turn(2, "Computer_terminal", f"exitcode: 1\nTraceback: FileNotFoundError {SECRET}"),
            Turn(3, "Coder_Expert", "The file is missing, I will use sample data instead: 42."),
            Turn(4, "Checker_Expert", "The total is 42. TERMINATE"),
        ),
    )


def test_the_judge_picks_among_the_kits_candidates_and_sees_nothing_else(endpoint) -> None:
    judge = ChatJudge(endpoint, "stub-model", api_key="k-123")
    kit = get_attributor().attribute(_run(1))
    (a,) = judge.attribute_many([_run(1)])
    assert a is not None and kit is not None
    assert a.step == kit.candidates[1].step and a.step != kit.step
    assert a.evidence["judge"]["kit_step"] == kit.step and a.attributor == "llm-judge"
    (sent,) = _Stub.requests
    assert sent["path"] == "/v1/chat/completions" and sent["model"] == "stub-model"
    assert _Stub.headers_seen == ["Bearer k-123"]
    body = json.loads(sent["messages"][-1]["content"])
    assert [c["step"] for c in body["candidates"]] == [c.step for c in kit.candidates]
    assert "error_steps" in body["signals"]
    assert SECRET not in json.dumps(sent)  # the tool turn is no candidate: never sent


def test_answers_are_cached_calls_are_concurrent_and_budgeted(endpoint) -> None:
    cache = ResultCache(None)
    runs = [_run(i) for i in range(4)]
    judge = ChatJudge(endpoint, "stub-model", cache=cache, max_concurrency=2, max_calls=3)
    first = judge.attribute_many(runs)
    assert len(_Stub.requests) == 3 and judge.calls == 3
    over = [a for a in first if a is not None and "kept_kit_attribution" in a.evidence["judge"]]
    assert len(over) == 1 and "budget" in over[0].evidence["judge"]["kept_kit_attribution"]
    again = ChatJudge(endpoint, "stub-model", cache=cache, max_calls=0)
    second = again.attribute_many(runs[:3])
    assert len(_Stub.requests) == 3 and again.calls == 0  # all three answered from the cache
    assert [a.step for a in second] == [a.step for a in first[:3]]


@pytest.mark.parametrize("pick", ["bogus", "prose"])
def test_a_judge_that_names_no_candidate_leaves_the_kits_attribution(endpoint, pick) -> None:
    _Stub.pick = pick
    kit = get_attributor().attribute(_run(7))
    (a,) = ChatJudge(endpoint, "stub-model").attribute_many([_run(7)])
    assert a is not None and kit is not None and a.step == kit.step
    assert "kept_kit_attribution" in a.evidence["judge"]


def test_an_unreachable_endpoint_leaves_the_kits_attribution() -> None:
    judge = ChatJudge("http://127.0.0.1:9/v1", "m", timeout_s=2.0)
    a = judge.attribute(_run(2))
    assert a is not None and "judge failed" in a.evidence["judge"]["kept_kit_attribution"]


def test_the_registry_names_what_the_environment_must_give(monkeypatch) -> None:
    monkeypatch.delenv("CONTEXTOS_JUDGE_BASE_URL", raising=False)
    with pytest.raises(UserError, match="CONTEXTOS_JUDGE_BASE_URL"):
        get_attributor("llm-judge")
    monkeypatch.setenv("CONTEXTOS_JUDGE_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("CONTEXTOS_JUDGE_MODEL", "m")
    assert isinstance(get_attributor("llm-judge"), ChatJudge)


def test_the_environment_sets_the_judges_budget_concurrency_and_persistent_cache(
    endpoint, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("CONTEXTOS_JUDGE_BASE_URL", endpoint)
    monkeypatch.setenv("CONTEXTOS_JUDGE_MODEL", "stub-model")
    monkeypatch.setenv("CONTEXTOS_JUDGE_MAX_CALLS", "2")
    monkeypatch.setenv("CONTEXTOS_JUDGE_CONCURRENCY", "3")
    monkeypatch.setenv("CONTEXTOS_JUDGE_CACHE", str(tmp_path / "judge.sqlite"))
    judge = get_attributor("llm-judge")
    assert isinstance(judge, ChatJudge)
    assert (judge.max_calls, judge.max_concurrency) == (2, 3)
    judge.attribute_many([_run(i) for i in range(2)])
    assert len(_Stub.requests) == 2
    again = get_attributor("llm-judge")  # a new process's judge: the answers are on disk
    judged = again.attribute_many([_run(i) for i in range(2)])
    assert len(_Stub.requests) == 2 and all(a.attributor == "llm-judge" for a in judged)


@pytest.mark.parametrize(
    ("name", "value"),
    [("CONTEXTOS_JUDGE_MAX_CALLS", "ten"), ("CONTEXTOS_JUDGE_CONCURRENCY", "0")],
)
def test_a_bad_judge_knob_is_refused_with_its_name(monkeypatch, name, value) -> None:
    monkeypatch.setenv("CONTEXTOS_JUDGE_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("CONTEXTOS_JUDGE_MODEL", "m")
    monkeypatch.setenv(name, value)
    with pytest.raises(UserError, match=name):
        get_attributor("llm-judge")


def test_a_judge_cache_that_cannot_open_is_refused_with_its_name(monkeypatch) -> None:
    monkeypatch.setenv("CONTEXTOS_JUDGE_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("CONTEXTOS_JUDGE_MODEL", "m")
    monkeypatch.setenv("CONTEXTOS_JUDGE_CACHE", "nosuchdriver://x/y")
    with pytest.raises(UserError, match="CONTEXTOS_JUDGE_CACHE"):
        get_attributor("llm-judge")


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released): a connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _from_env(monkeypatch, base_url: str) -> None:
    monkeypatch.setenv("CONTEXTOS_JUDGE_BASE_URL", base_url)
    monkeypatch.setenv("CONTEXTOS_JUDGE_MODEL", "m")
    for name in ("API_KEY", "MAX_CALLS", "CONCURRENCY", "CACHE"):
        monkeypatch.delenv(f"CONTEXTOS_JUDGE_{name}", raising=False)


def test_cluster_with_an_unreachable_judge_stops_with_one_line(
    monkeypatch, tmp_path, capsys
) -> None:
    """`cluster --attributor llm-judge` with the endpoint down exited 0 and wrote the kit's
    own attributions as `default`, with not a word that the judge was never reached."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    _from_env(monkeypatch, url)
    runs = write_runs(tmp_path / "runs", [annotate(group_chat_run(i), "Data_Expert", 1, "x")
                                          for i in range(3)])  # fmt: skip
    out = tmp_path / "out"
    args = ["cluster", str(runs), "--out", str(out), "--attributor", "llm-judge",
            "--heldout-fraction", "0", "--text-backend", "none", "--workers", "1"]  # fmt: skip
    assert main(args) == EXIT_HARNESS
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and url in err[0] and "CONTEXTOS_JUDGE_BASE_URL" in err[0]
    assert "Traceback" not in err[0] and not (out / "insights.json").exists()


def test_a_judge_that_refuses_every_call_stops_but_one_that_answered_falls_back(
    endpoint, monkeypatch
) -> None:
    _from_env(monkeypatch, endpoint)
    _Stub.pick = "refuse"
    with pytest.raises(ExitError, match="401") as stopped:
        get_attributor("llm-judge").attribute_many([_run(1), _run(2)])
    assert stopped.value.code == EXIT_HARNESS
    judge = get_attributor("llm-judge")
    _Stub.pick = "second"
    assert judge.attribute_many([_run(3)])[0].attributor == "llm-judge"
    _Stub.pick = "refuse"  # reached once: a later failure keeps the kit's attribution
    (a,) = judge.attribute_many([_run(4)])
    assert "401" in a.evidence["judge"]["kept_kit_attribution"]


def test_a_base_url_without_a_scheme_is_refused_with_its_name(monkeypatch) -> None:
    _from_env(monkeypatch, "localhost:8000/v1")
    with pytest.raises(UserError, match="CONTEXTOS_JUDGE_BASE_URL='localhost:8000/v1'"):
        get_attributor("llm-judge")
