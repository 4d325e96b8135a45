"""Attributions scored against an answer key: top-1 / top-3 agreement, trivial baselines, and
how well the stated probabilities are calibrated (reliability table, ECE).

The answer key is the annotation (`mistake_step` / `mistake_agent`) or, where a loader derives
one from ground truth, `failing_step` (tau-bench: the call that went wrong); the annotated agent
is the speaker of the annotated step when no agent is named. It scores attributions here and
nowhere feeds them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.insights.attribution.protocol import Attribution
from contextos_lab.insights.attribution.turns import RunTrace, agent_key, run_trace
from contextos_lab.loaders.otlp import Trace

STEP_KEYS = ("mistake_step", "failing_step")


@dataclass(frozen=True)
class Annotated:
    run: RunTrace
    step: int
    agent: str | None


def _agent_at(run: RunTrace, step: int) -> str | None:
    return next((t.speaker for t in run.turns if t.index == step), None)


def annotated_runs(traces: Iterable[Trace], records: pd.DataFrame) -> list[Annotated]:
    """Failed runs of `records` (a runs frame) with a trace and an answer-key step."""
    by_trace = {t.trace_id: t for t in traces}
    failed = records[records["failed"].astype(bool)] if "failed" in records else records
    out = []
    for rec in failed.itertuples(index=False):
        inputs = rec.inputs if isinstance(rec.inputs, Mapping) else {}
        step = next((inputs[k] for k in STEP_KEYS if isinstance(inputs.get(k), int)), None)
        trace = by_trace.get(rec.trace_id)
        if step is None or trace is None:
            continue
        run = run_trace(trace)
        named = inputs.get("mistake_agent")
        out.append(Annotated(run, int(step), str(named) if named else _agent_at(run, step)))
    return out


def _key_at(run: RunTrace, position: int) -> str:
    return agent_key(run.turns[position].speaker) if position < len(run.turns) else ""


def _agents(a: Attribution, k: int) -> list[str]:
    """The attribution's own agent first (the speaker of its top step: what it names, and what
    clusters and insights read), then the other agents by summed step probability. Reading
    top-1 off the summed probabilities instead scored an agent the attribution never named
    (docs/failure_attribution.md, "What an attribution holds")."""
    named = agent_key(a.agent)
    rest = [key for key in (agent_key(n) for n, _ in a.agents) if key != named]
    return [named, *rest][:k]


def _steps(a: Attribution, k: int) -> list[int]:
    return [c.step for c in a.candidates[:k]] or [a.step]


def top_k_agreement(
    atts: Sequence[Attribution | None], key: Sequence[Annotated]
) -> dict[str, dict[str, float | None]]:
    """{"agent": {"top1", "top3"}, "step": {"top1", "top3"}} over the runs of `key`."""
    out: dict[str, dict[str, float | None]] = {}
    for what in ("agent", "step"):
        scored = [
            (a, k) for a, k in zip(atts, key, strict=True) if what == "step" or k.agent is not None
        ]
        row: dict[str, float | None] = {}
        for depth in (1, 3):
            if not scored:
                row[f"top{depth}"] = None
                continue
            hits = [
                a is not None
                and (
                    agent_key(str(k.agent)) in _agents(a, depth)
                    if what == "agent"
                    else k.step in _steps(a, depth)
                )
                for a, k in scored
            ]
            row[f"top{depth}"] = sum(hits) / len(scored)
        out[what] = row
    return out


def trivial_baselines(key: Sequence[Annotated]) -> dict[str, float]:
    """Guesses that read no trace content: the most common agent and step (taken from the
    answer key itself, which favours them), the first speaker, step 1, a random step."""
    if not key:
        return {}
    n = len(key)
    agents = [agent_key(k.agent) for k in key if k.agent is not None]
    common_agent = Counter(agents).most_common(1)[0][0] if agents else None
    common_step = Counter(k.step for k in key).most_common(1)[0][0]
    first = [agent_key(k.run.turns[0].speaker) if k.run.turns else "" for k in key]
    return {
        "agent_most_common": sum(a == common_agent for a in agents) / max(1, len(agents)),
        "agent_first_speaker": sum(
            k.agent is not None and f == agent_key(k.agent) for f, k in zip(first, key, strict=True)
        )
        / max(1, len(agents)),
        "agent_speaker_of_step_1": sum(
            k.agent is not None and _key_at(k.run, 1) == agent_key(k.agent) for k in key
        )
        / max(1, len(agents)),
        "step_most_common": sum(k.step == common_step for k in key) / n,
        "step_1": sum(k.step == 1 for k in key) / n,
        "step_random_expected": float(np.mean([1 / max(1, len(k.run.turns)) for k in key])),
    }


def reliability(
    atts: Sequence[Attribution | None], key: Sequence[Annotated], bins: int = 10
) -> dict[str, Any]:
    """Expected calibration error of the top step's probability, with the reliability table
    (per equal-width bin: runs, mean stated probability, share correct)."""
    pairs = [
        (float(a.probability), a.step == k.step)
        for a, k in zip(atts, key, strict=True)
        if a is not None and a.probability is not None
    ]
    if not pairs:
        return {"ece": None, "runs": 0, "bins": []}
    p = np.array([x for x, _ in pairs])
    hit = np.array([h for _, h in pairs], dtype=float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    table = []
    ece = 0.0
    for b in range(bins):
        mask = which == b
        if not mask.any():
            continue
        stated, observed = float(p[mask].mean()), float(hit[mask].mean())
        ece += mask.sum() / len(p) * abs(stated - observed)
        table.append(
            {
                "bin": [b / bins, (b + 1) / bins],
                "runs": int(mask.sum()),
                "stated": stated,
                "observed": observed,
            }
        )
    return {"ece": float(ece), "runs": len(p), "bins": table}


__all__ = [
    "STEP_KEYS",
    "Annotated",
    "annotated_runs",
    "reliability",
    "top_k_agreement",
    "trivial_baselines",
]
