"""The bundled attributors: a linear score over generic step features, and the ten-line rule.

`LinearAttributor` scores every candidate step (turns by an agent or orchestrator, and the
run's final turn whoever speaks it: the place of an omission) as the weighted sum of its
features and blames the best step's speaker; the evidence is each fired feature's
contribution. `run_rows` gives a run's candidate rows; the weights are fitted in `fitting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from contextos_lab.insights.attribution.features import (
    STEP_FEATURES,
    TOOL,
    USER,
    RunSignals,
    run_signals,
    step_features,
)
from contextos_lab.insights.attribution.protocol import Attribution, excerpt
from contextos_lab.insights.attribution.ranking import (
    LOW_CONFIDENCE,
    TOP_K,
    ranked,
)
from contextos_lab.insights.attribution.system_features import is_system_feature, system_rows
from contextos_lab.insights.attribution.turns import RunTrace, agent_key


def candidates(run: RunTrace, signals: RunSignals) -> list[int]:
    """Steps that can be blamed: the acting turns (not tool output, not the user), and the
    run's final turn whoever speaks it. A failure of omission (something never done) has no
    wrong act to point at: its decisive step is where the run ended, which is often the user's
    or a tool's turn (decided from the turns' order, not from any answer key). A container
    span (`Turn.container`: it only holds other spans) is never a candidate."""
    role = {
        i: signals.role[agent_key(t.speaker)] for i, t in enumerate(run.turns) if not t.container
    }
    steps = [i for i, r in role.items() if r not in (TOOL, USER)]
    steps = steps or [i for i, r in role.items() if r != TOOL]
    last = max(role, default=None)
    return steps if last is None or last in steps else [*steps, last]


def _evidence(run: RunTrace, s: RunSignals) -> dict[str, object]:
    at = [t.index for t in run.turns]  # positions → the trace's own step ids
    return {
        "error_steps": [at[i] for i in s.errors],
        "error_types": {str(at[k]): v for k, v in s.error_types.items()},
        "loop_steps": [at[i] for i in s.loop_steps],
        "stall_steps": [at[i] for i in s.stall_steps],
        "repeated_steps": [at[i] for i in s.repeated_steps],
        "limit": s.limit,
        "terminated": s.terminated,
        "transferred": s.transferred,
        "ending": s.ending,
        "n_steps": len(run.turns),
    }


@dataclass(frozen=True)
class LinearAttributor:
    weights: Mapping[str, float]
    name: str = "linear"
    #: Softmax temperature of the candidates' scores (see `ranking.fit_temperature`).
    temperature: float = 1.0
    top_k: int = TOP_K
    low_confidence_below: float = LOW_CONFIDENCE

    def scores(self, run: RunTrace, s: RunSignals) -> dict[int, tuple[float, dict[str, float]]]:
        rows = step_features(run, s)
        cand = candidates(run, s)
        # A calibrated file also weighs this system's own speakers, tools and places
        # (`system_features`); the bundled weights have none, so they skip the extra rows.
        own = any(is_system_feature(f) for f in self.weights)
        extra = system_rows(run, cand) if own else [{} for _ in cand]
        out = {}
        for i, more in zip(cand, extra, strict=True):
            parts = {f: self.weights.get(f, 0.0) * rows[i][f] for f in STEP_FEATURES}
            parts |= {f: self.weights.get(f, 0.0) * v for f, v in more.items()}
            out[i] = (sum(parts.values()), parts)
        return out

    def attribute(self, run: RunTrace) -> Attribution | None:
        if not run.turns:
            return None
        s = run_signals(run)
        scored = self.scores(run, s)
        if not scored:
            return None
        top, agents = ranked(run, scored, self.temperature, max(1, self.top_k))
        best = top[0]
        return Attribution(
            run_id=run.run_id,
            agent=best.agent,
            step=best.step,
            position=best.position,
            role=s.role[agent_key(best.agent)],
            signal=best.signals[0][0] if best.signals else "highest score",
            signals=best.signals,
            excerpt=best.excerpt,
            attributor=self.name,
            evidence=_evidence(run, s),
            candidates=top,
            agents=agents,
            probability=best.probability,
            low_confidence=best.probability < self.low_confidence_below,
        )


@dataclass(frozen=True)
class LastActorBeforeErrorRule:
    """The ten-line rule: the last agent to speak before the first execution error, else the
    first agent after the task statement."""

    name: str = "last-actor-before-error"

    def attribute(self, run: RunTrace) -> Attribution | None:
        if not run.turns:
            return None
        s = run_signals(run)
        steps = candidates(run, s)
        if not steps:
            return None
        before = [i for i in steps if s.errors and i < s.errors[0]]
        step, signal = (
            (before[-1], "last_actor_before_first_error")
            if before
            else (next((i for i in steps if i > 0), steps[0]), "first actor after the task")
        )
        turn = run.turns[step]
        return Attribution(
            run.run_id,
            turn.speaker,
            turn.index,  # the step as the trace numbers it; `position` is where it is in turns
            s.role[agent_key(turn.speaker)],
            signal,
            ((signal, 1.0),),
            excerpt(turn.content),
            self.name,
            _evidence(run, s),
            position=step,
        )


def run_rows(run: RunTrace, step: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """One run's candidate feature rows, whether each is the annotated step, their steps."""
    s = run_signals(run)
    rows = step_features(run, s)
    cand = candidates(run, s)
    x = np.array([[rows[i][f] for f in STEP_FEATURES] for i in cand], dtype=float)
    x = x.reshape(len(cand), len(STEP_FEATURES))
    at = [run.turns[i].index for i in cand]
    return x, np.array([int(a == step) for a in at], dtype=int), at


def run_system_rows(run: RunTrace) -> list[dict[str, float]]:
    """One run's per-system feature rows (see `system_features`), in `run_rows`' order."""
    return system_rows(run, candidates(run, run_signals(run)))


__all__ = [
    "LastActorBeforeErrorRule",
    "LinearAttributor",
    "candidates",
    "run_rows",
    "run_system_rows",
]
