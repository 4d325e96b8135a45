"""Contract suites for the seams users extend, in the style of `optuna.testing`: subclass one
in your own tests, override its fixtures with your implementation, and pytest runs every check
(docs/harness-contract.md, "Checking your harness"). Needs pytest (`pip install
contextos-lab[testing]`)."""

from __future__ import annotations

from contextos_lab.testing.attributor import AttributorContract, AttributorFactory, sample_runs
from contextos_lab.testing.evaluator import EvaluatorContract
from contextos_lab.testing.harness import HarnessContract, HarnessFactory, ProgramHarnessContract
from contextos_lab.testing.loader import LoaderContract, TraceLoader
from contextos_lab.testing.proposer import Proposer, ProposerContract, toy_layout

__all__ = [
    "AttributorContract",
    "AttributorFactory",
    "EvaluatorContract",
    "HarnessContract",
    "HarnessFactory",
    "LoaderContract",
    "ProgramHarnessContract",
    "Proposer",
    "ProposerContract",
    "TraceLoader",
    "sample_runs",
    "toy_layout",
]
