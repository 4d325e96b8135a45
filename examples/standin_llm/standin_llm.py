"""A stand-in for an LLM agent harness: slow, paid per token, and different every run.

No network and no model: each call sleeps for a latency drawn from a log-normal (LLM API
latencies are right-skewed; median ~0.3 s for the `medium` model), reports token counts,
and answers an arithmetic question correctly with a probability that depends on the config
and the case's difficulty. Seeded by the kit per (case, repeat) so runs are reproducible
when asked, random otherwise. It never sees the answer: it computes it, then may slip.

Swap in a real harness by keeping the same shape: `name`, `version` (bump it when the prompt
or model changes: cached results are keyed by it), `max_concurrency`, `tunable_surfaces()` and
`run(case, config, seed=None) -> RunResult` that calls your API (see README, "Bring your own
harness").
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from contextos_lab.api import ChangeClass, RunResult, SurfaceLayer, TunableSurface

#: Median seconds per call and correctness base rate per model tier.
MEDIAN_S = {"small": 0.15, "medium": 0.3, "large": 0.6}
BASE_ACCURACY = {"small": 0.55, "medium": 0.72, "large": 0.85}
OUTPUT_TOKENS = {"small": 20, "medium": 40, "large": 120}
LATENCY_SIGMA = 0.45  # log-normal shape: p95 ~ 2.1 x median

SURFACES: tuple[TunableSurface, ...] = (
    TunableSurface(
        name="model", layer=SurfaceLayer.planner, kind="categorical",
        choices=("small", "medium", "large"), baseline="medium",
        change_class=ChangeClass.control_flow, description="model tier: accuracy, latency, tokens",
    ),
    TunableSurface(
        name="few_shot", layer=SurfaceLayer.prompt, kind="int", low=0, high=8, step=1,
        baseline=2, change_class=ChangeClass.additive,
        description="worked examples in the prompt: more accurate, more input tokens",
    ),
    TunableSurface(
        name="temperature", layer=SurfaceLayer.planner, kind="float", low=0.0, high=1.0,
        step=0.1, baseline=0.7, change_class=ChangeClass.control_flow,
        description="sampling temperature: higher slips more on hard questions",
    ),
    TunableSurface(
        name="redact_pii", layer=SurfaceLayer.policy, kind="bool", baseline=False,
        change_class=ChangeClass.control_flow,
        description="scrub e-mail addresses from the answer (costs a few tokens)",
    ),
    TunableSurface(
        name="tone", layer=SurfaceLayer.prompt, kind="categorical",
        choices=("plain", "friendly"), baseline="plain", change_class=ChangeClass.additive,
        description="wording only: changes nothing that is scored (an A/A knob)",
    ),
)  # fmt: skip


#: The cheap tier (`tier="cheap"`, issue 46): the same questions answered by a smaller stack.
#: Its ranking agrees with the target's only in part: few-shot helps it more, temperature hurts
#: it more, and its best model tier flips (medium beats large there).
CHEAP_ACCURACY = {"small": 0.5, "medium": 0.66, "large": 0.6}
CHEAP_MEDIAN_S = {"small": 0.1, "medium": 0.12, "large": 0.2}
#: Tiers: `target` (the stand-in as always), `cheap` (agrees in part), `unrelated` (a screen
#: whose every score is a fixed pseudo-random function of the config: no agreement at all).
TIERS = ("target", "cheap", "unrelated")


def accuracy(config: Mapping[str, Any], difficulty: float, tier: str = "target") -> float:
    """Probability of a correct answer (the config-dependent rate the noise is drawn around)."""
    shots, temp = int(config["few_shot"]), float(config["temperature"])
    if tier == "cheap":
        p = CHEAP_ACCURACY[config["model"]] + 0.045 * shots - (0.25 + 0.45 * temp) * difficulty
    elif tier == "unrelated":
        p = 0.3 + 0.6 * config_draw(config, "accuracy") - 0.1 * difficulty
    else:
        p = BASE_ACCURACY[config["model"]] + 0.025 * shots - (0.25 + 0.2 * temp) * difficulty
    return min(0.98, max(0.02, p))


def config_draw(config: Mapping[str, Any], what: str) -> float:
    """A uniform draw in [0, 1) fixed by the config (and `what`), unrelated to its knobs' effect."""
    key = repr(sorted((k, str(v)) for k, v in config.items())) + what
    return random.Random(key).random()


def solve(op: str, a: int, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b}[op]


class StandInLLM:
    """The stand-in harness (Python callable); `time_scale` shrinks the sleeps for tests."""

    name = "standin-llm"
    version = "1.0"

    def __init__(
        self,
        time_scale: float = 1.0,
        max_concurrency: int = 32,
        leak_rate: float = 0.1,
        tier: str = "target",
    ) -> None:
        if tier not in TIERS:
            raise ValueError(f"tier must be one of {TIERS}, not {tier!r}")
        self.time_scale = float(time_scale)
        self.max_concurrency = int(max_concurrency)
        self.leak_rate = float(leak_rate)
        self.tier = tier

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return SURFACES

    def latency_s(self, config: Mapping[str, Any], rng: random.Random) -> float:
        if self.tier == "unrelated":
            median = 0.05 + 0.5 * config_draw(config, "latency")
        else:
            table = CHEAP_MEDIAN_S if self.tier == "cheap" else MEDIAN_S
            median = table[config["model"]] * (1 + 0.03 * int(config["few_shot"]))
        return median * math.exp(rng.gauss(0.0, LATENCY_SIGMA))

    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        rng = random.Random(seed) if seed is not None else random.Random()
        t0 = time.perf_counter()
        latency = self.latency_s(config, rng)
        if self.time_scale > 0:  # sleep(0) still yields the CPU: skip it when not timing
            time.sleep(latency * self.time_scale)
        truth = solve(str(case["op"]), int(case["a"]), int(case["b"]))
        correct = rng.random() < accuracy(config, float(case.get("difficulty", 0.5)), self.tier)
        answer = truth if correct else truth + rng.choice((-10, -2, -1, 1, 2, 10))
        text = f"The answer is {answer}."
        if config["tone"] == "friendly":
            text = f"Happy to help! {text}"
        email = case.get("email")
        exposed = isinstance(email, str) and email and not config["redact_pii"]
        if exposed and rng.random() < self.leak_rate:
            text += f" (I will reply to {email}.)"
        tokens_in = 80 + 45 * int(config["few_shot"]) + len(str(case["question"])) // 4
        tokens_in += 15 if config["redact_pii"] else 0
        out_mean = OUTPUT_TOKENS[config["model"]]
        if self.tier == "unrelated":
            tokens_in = 80 + int(400 * config_draw(config, "tokens_in"))
            out_mean = 10 + int(110 * config_draw(config, "tokens_out"))
        tokens_out = max(1, int(out_mean * math.exp(rng.gauss(0, 0.3))))
        return RunResult(
            case_id=str(case["case_id"]),
            decision=str(answer),
            output_text=text,
            tokens=tokens_in + tokens_out,
            tokens_out=tokens_out,
            latency_ms=round(latency * 1000, 3),
            wall_ms=round((time.perf_counter() - t0) * 1000, 3),
        )


def make_cases(n: int, seed: int = 0, pii_share: float = 0.2) -> list[dict[str, Any]]:
    """Cases in the simple case format (`vars` + promptfoo-like `assert`), see `cases import`."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        op = rng.choice("+-*")
        hi = 99 if op != "*" else 30
        a, b = rng.randint(2, hi), rng.randint(2, hi)
        difficulty = round(min(1.0, (len(str(a)) + len(str(b))) / 4 * rng.uniform(0.5, 1.1)), 3)
        vars_: dict[str, Any] = {
            "question": f"What is {a} {op} {b}?",
            "op": op,
            "a": a,
            "b": b,
            "difficulty": difficulty,
        }
        asserts: list[dict[str, Any]] = [
            {"type": "equals", "target": "decision", "value": str(solve(op, a, b))}
        ]
        if rng.random() < pii_share:
            vars_["email"] = f"user{i}@example.com"
            asserts.append({"type": "not-contains", "value": vars_["email"], "metric": "safety"})
        out.append({"id": f"q{i:04d}", "vars": vars_, "assert": asserts})
    return out
