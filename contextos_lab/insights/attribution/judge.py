"""An LLM judge as an `Attributor`: any OpenAI-compatible chat endpoint (vLLM, llama.cpp
server, Ollama, a hosted API) picks the decisive step among the kit's top-k candidates.

The judge sees only what the kit already narrowed down: each candidate step's speaker, excerpt,
probability and the features behind it, plus the run's signals (errors, loop/stall flags,
ending, length), never the whole trace, so a call stays small and a long run costs the same as
a short one. The harness machinery does the rest: `harness.pool.run_pool` bounds concurrency
and abandons a call past its timeout, `harness.result_cache.ResultCache` keys each answer by
(endpoint, model, prompt version, request) so a re-run never pays twice, and `max_calls` is the
budget (the study's `autotune.budget.Budget` sits above this layer in the import order; a call
count is what a judge's budget is). A call that fails, is over budget or names no candidate
leaves the kit's own attribution, with the reason in its evidence; but a judge built from the
environment (`judge_from_env`, what `cluster --attributor llm-judge` uses) that has never been
answered stops when a whole batch of calls fails at the endpoint (down, misnamed, refusing the
key): falling back on every run would pass the kit's attributions off as the judge's run.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from contextos_lab.errors import EXIT_HARNESS, ExitError, UserError
from contextos_lab.harness.pool import run_pool
from contextos_lab.harness.result_cache import HarnessKey, ResultCache, config_hash, result_key
from contextos_lab.insights.attribution.protocol import Attribution, Attributor
from contextos_lab.insights.attribution.ranking import LOW_CONFIDENCE
from contextos_lab.insights.attribution.turns import RunTrace
from contextos_lab.schemas.base import canonical_json, sha256_hex

PROMPT_VERSION = "judge-v1"
ENV_BASE_URL, ENV_MODEL, ENV_KEY = (
    "CONTEXTOS_JUDGE_BASE_URL",
    "CONTEXTOS_JUDGE_MODEL",
    "CONTEXTOS_JUDGE_API_KEY",
)
SYSTEM = (
    "You attribute the failure of a multi-agent run. You are given the run's signals and a few "
    "candidate steps (speaker, excerpt, the kit's probability). Name the one step whose action "
    'decided the failure. Answer with JSON only: {"step": <candidate step>, "reason": "<one '
    'sentence>", "confidence": <0..1>}.'
)
_JSON = re.compile(r"\{.*\}", re.S)


def request_messages(first: Attribution) -> list[dict[str, str]]:
    """The chat messages for one run: its signals and the kit's candidates, nothing more."""
    payload = {
        "signals": {k: first.evidence.get(k) for k in sorted(first.evidence)},
        "candidates": [
            {
                "step": c.step,
                "speaker": c.agent,
                "kit_probability": c.probability,
                "features": [name for name, _ in c.signals[:5]],
                "excerpt": c.excerpt,
            }
            for c in first.candidates
        ],
    }
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
    ]


def _parse(answer: dict[str, Any]) -> dict[str, Any]:
    content = answer["choices"][0]["message"]["content"] or ""
    found = _JSON.search(content)
    if not found:
        raise ValueError("the judge's answer holds no JSON object")
    parsed = json.loads(found.group(0))
    if not isinstance(parsed, dict) or not isinstance(parsed.get("step"), int):
        raise ValueError('the judge\'s JSON has no integer "step"')
    return parsed


@dataclass
class ChatJudge:
    base_url: str
    model: str
    api_key: str | None = None
    #: The kit's attributor whose top-k candidates the judge chooses among.
    ranker: Attributor | None = None
    name: str = "llm-judge"
    max_concurrency: int = 4
    timeout_s: float = 120.0
    #: Calls this judge may make in its lifetime (None: unbounded); cache hits are free.
    max_calls: int | None = None
    cache: ResultCache = field(default_factory=lambda: ResultCache(None))
    calls: int = 0
    #: Stop (ExitError, exit 4) when every call of a batch failed at the endpoint and no call
    #: of this judge was ever answered; else such failures keep the kit's attribution.
    stop_if_never_answered: bool = False
    _answered: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _ranker(self) -> Attributor:
        """The kit's ranking the judge chooses among (the registry passes the default with
        any calibrated weights; built directly, the bundled weights)."""
        if self.ranker is None:
            from contextos_lab.insights.attribution.default_weights import (
                DEFAULT_TEMPERATURE,
                DEFAULT_WEIGHTS,
            )
            from contextos_lab.insights.attribution.linear import LinearAttributor

            self.ranker = LinearAttributor(
                DEFAULT_WEIGHTS, name="default", temperature=DEFAULT_TEMPERATURE
            )
        return self.ranker

    def attribute(self, run: RunTrace) -> Attribution | None:
        return self.attribute_many([run])[0]

    def _key(self, messages: list[dict[str, str]]) -> str:
        who = HarnessKey(f"chat:{self.base_url.rstrip('/')}", self.model)
        return result_key(
            who, config_hash({"prompt": PROMPT_VERSION}), sha256_hex(canonical_json(messages)), 0
        )

    def _post(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "messages": messages, "temperature": 0}
        url = self.base_url.rstrip("/") + "/chat/completions"
        response = httpx.post(url, json=body, headers=headers, timeout=self.timeout_s)
        response.raise_for_status()
        return response.json()

    def _budgeted(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                raise RuntimeError(f"over the judge's budget of {self.max_calls} calls")
            self.calls += 1
        return self._post(messages)

    def attribute_many(self, runs: Sequence[RunTrace]) -> list[Attribution | None]:
        """Every run's attribution, the judge's calls made concurrently (cached ones skipped)."""
        firsts = [self._ranker().attribute(r) for r in runs]
        asks = {i: request_messages(a) for i, a in enumerate(firsts) if a and a.candidates}
        keys = {i: self._key(m) for i, m in asks.items()}
        stored = self.cache.get_many(list(keys.values()))
        todo = [i for i in asks if keys[i] not in stored]
        answers = run_pool(
            [functools.partial(self._budgeted, asks[i]) for i in todo],
            self.max_concurrency,
            [self.timeout_s + 5] * len(todo),
        )
        fresh = {i: a for i, a in zip(todo, answers, strict=True) if isinstance(a, dict)}
        self._check_reached(answers, bool(fresh))
        who = HarnessKey(f"chat:{self.base_url.rstrip('/')}", self.model)
        self.cache.put_many(
            {
                "key": keys[i],
                "harness": who.name,
                "harness_version": who.version,
                "config_hash": config_hash({"prompt": PROMPT_VERSION}),
                "case_hash": sha256_hex(canonical_json(asks[i])),
                "repeat": 0,
                "seed": None,
                "result": a,
            }
            for i, a in fresh.items()
        )
        failed = {i: a for i, a in zip(todo, answers, strict=True) if not isinstance(a, dict)}
        out: list[Attribution | None] = []
        for i, first in enumerate(firsts):
            if first is None or i not in asks:
                out.append(first)
                continue
            answer = stored.get(keys[i]) or fresh.get(i)
            out.append(self._judged(first, answer, failed.get(i)))
        return out

    def _check_reached(self, answers: Sequence[Any], any_answer: bool) -> None:
        """Raise when the endpoint failed every call of this batch and never answered before."""
        self._answered = self._answered or any_answer
        failed = [a for a in answers if isinstance(a, httpx.HTTPError)]
        if self._answered or not self.stop_if_never_answered or not failed:
            return
        if len(failed) < len(answers):  # another failure (a budget, a timeout): not the endpoint
            return
        first = failed[0]
        why = (
            f"HTTP {first.response.status_code} {first.response.reason_phrase}"
            if isinstance(first, httpx.HTTPStatusError)
            else str(first) or type(first).__name__
        )
        raise ExitError(
            f"llm-judge: no answer from {self.base_url.rstrip('/')}/chat/completions "
            f"(all {len(failed)} calls failed, the first: {why}); check "
            f"{ENV_BASE_URL}, {ENV_MODEL} and {ENV_KEY}",
            code=EXIT_HARNESS,
        )

    def _judged(
        self, first: Attribution, answer: dict[str, Any] | None, error: object
    ) -> Attribution:
        try:
            if answer is None:
                raise RuntimeError(str(error) or type(error).__name__)
            parsed = _parse(answer)
            chosen = next(c for c in first.candidates if c.step == parsed["step"])
        except StopIteration:
            return _kept(first, "the judge named a step that is not a candidate")
        except (RuntimeError, ValueError, KeyError, IndexError, TypeError) as exc:
            return _kept(first, f"judge failed: {exc}")
        others = tuple(c for c in first.candidates if c is not chosen)
        return replace(
            first,
            agent=chosen.agent,
            step=chosen.step,
            position=chosen.position,
            signal="llm judge",
            signals=chosen.signals,
            excerpt=chosen.excerpt,
            attributor=self.name,
            candidates=(chosen, *others),
            probability=chosen.probability,
            low_confidence=chosen.probability < LOW_CONFIDENCE,
            evidence={
                **first.evidence,
                "judge": {
                    "model": self.model,
                    "reason": str(parsed.get("reason", "")),
                    "stated_confidence": parsed.get("confidence"),
                    "kit_step": first.step,
                },
            },
        )


def _kept(first: Attribution, why: str) -> Attribution:
    return replace(first, evidence={**first.evidence, "judge": {"kept_kit_attribution": why}})


ENV_MAX_CALLS, ENV_CONCURRENCY, ENV_CACHE = (
    "CONTEXTOS_JUDGE_MAX_CALLS",
    "CONTEXTOS_JUDGE_CONCURRENCY",
    "CONTEXTOS_JUDGE_CACHE",
)


def _env_int(name: str, default: int | None, low: int) -> int | None:
    """A whole-number knob from the environment, refused with its name when it is not one."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low:
        raise UserError(f"{name}={raw!r}: a whole number >= {low} is needed")
    return value


def _env_cache() -> ResultCache:
    """The judge's answers kept where CONTEXTOS_JUDGE_CACHE says (a SQLAlchemy URL, or a SQLite
    file's path), so a re-run of `cluster` never pays for an answer twice; unset: this process."""
    raw = os.environ.get(ENV_CACHE, "").strip()
    if not raw:
        return ResultCache(None)
    url = raw if "://" in raw else f"sqlite:///{Path(raw).expanduser().resolve()}"
    from sqlalchemy.exc import SQLAlchemyError

    try:
        return ResultCache(url)
    except (SQLAlchemyError, OSError) as exc:
        raise UserError(f"{ENV_CACHE}={raw!r}: cannot open the judge's cache: {exc}") from exc


def judge_from_env(ranker: Attributor | None = None) -> ChatJudge:
    """The judge named by CONTEXTOS_JUDGE_BASE_URL / _MODEL (and _API_KEY when the endpoint
    needs one), choosing among `ranker`'s candidates; _MAX_CALLS (its budget), _CONCURRENCY and
    _CACHE set the harness machinery's knobs (docs/failure_attribution.md, "An LLM judge")."""
    base, model = os.environ.get(ENV_BASE_URL, ""), os.environ.get(ENV_MODEL, "")
    if not base or not model:
        raise UserError(
            f"the llm-judge attributor needs {ENV_BASE_URL} (e.g. http://localhost:8000/v1) "
            f"and {ENV_MODEL} in the environment"
        )
    if not base.startswith(("http://", "https://")):
        raise UserError(f"{ENV_BASE_URL}={base!r}: an http:// or https:// URL is needed")
    return ChatJudge(
        base,
        model,
        os.environ.get(ENV_KEY) or None,
        ranker=ranker,
        max_concurrency=_env_int(ENV_CONCURRENCY, 4, 1) or 4,
        max_calls=_env_int(ENV_MAX_CALLS, None, 0),
        cache=_env_cache(),
        stop_if_never_answered=True,
    )


__all__ = ["PROMPT_VERSION", "ChatJudge", "judge_from_env", "request_messages"]
