"""The attribution seam: who caused a failed run and at which step, with the evidence used.

An `Attributor` reads one run's turns (never its annotations) and names the failure-responsible
agent and the decisive step. The bundled ones need no model and no network; a user can plug an
LLM judge or their own rule by implementing `attribute` (see `registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from contextos_lab.insights.attribution.turns import RunTrace

EXCERPT_CHARS = 300


@dataclass(frozen=True)
class Candidate:
    """One ranked step: its score, its probability of being the decisive step (the run's
    candidates' scores through a softmax at the attributor's fitted temperature) and the
    features that pushed it up."""

    step: int
    position: int
    agent: str
    score: float
    probability: float
    signals: tuple[tuple[str, float], ...] = ()
    excerpt: str = ""


@dataclass(frozen=True)
class Attribution:
    run_id: str
    agent: str
    #: The step as the trace numbers it (Who&When: the history index; tau-bench: the message).
    step: int
    #: The speaker's role in the run (agent, orchestrator, tool, user).
    role: str
    #: The signal that decided the step (the largest contribution), and every one that fired.
    signal: str
    signals: tuple[tuple[str, float], ...] = ()
    excerpt: str = ""
    attributor: str = ""
    #: Run-level facts the attribution rests on (errors, loop/stall steps, ending).
    evidence: dict[str, Any] = field(default_factory=dict)
    #: Where the step is in `RunTrace.turns` (a tau-bench message may hold several turns).
    position: int = 0
    #: The top-k steps, best first (the first is `step`); empty for a one-guess attributor.
    candidates: tuple[Candidate, ...] = ()
    #: Agents by the summed probability of their candidate steps, best first.
    agents: tuple[tuple[str, float], ...] = ()
    #: Calibrated probability that `step` is the decisive step (None: not calibrated).
    probability: float | None = None
    #: True when `probability` is below the attributor's low-confidence threshold.
    low_confidence: bool = False


@runtime_checkable
class Attributor(Protocol):
    @property
    def name(self) -> str:
        """The attributor's name (read-only: a frozen dataclass's field satisfies it)."""
        ...

    def attribute(self, run: RunTrace) -> Attribution | None:
        """The attribution for a failed run, or None when the run has no turn to blame."""
        ...


def excerpt(text: str, width: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width] + " …"


__all__ = ["EXCERPT_CHARS", "Attribution", "Attributor", "Candidate", "excerpt"]
