"""Contract suites for the seams users extend, in the style of `optuna.testing`: subclass one
in your own tests, override its fixtures with your implementation, and pytest runs every check
(docs/harness-contract.md, "Checking your harness"). Needs pytest (`pip install
contextos-lab[testing]`)."""

from __future__ import annotations

from contextos_lab.testing.harness import (
    HarnessContract,
    HarnessFactory,
    ProgramHarnessContract,
)

__all__ = ["HarnessContract", "HarnessFactory", "ProgramHarnessContract"]
