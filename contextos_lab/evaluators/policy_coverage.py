"""Which case intents the policy evaluator has no rule for (and so cannot judge).

An intent missing from the project's `policy_evaluation` table cannot be judged: its cases are
not scored on policy (NaN, never a silent 1.0), so the policy floor binds only the intents that
have a rule. `project --check` and `search` name such intents before anything is paid, and the
gate report names them beside the policy test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: callers hold a loaded project already
    from contextos_lab.domain.config import DomainConfig


def project_intents(project: DomainConfig) -> set[str]:
    """The case intents a project declares: its `case_intents` values, and each decision key's
    intent that `case_intents` does not map to case intents of its own."""
    intents = {
        spec.intent
        for spec in project.decision_keys.values()
        if spec.intent and spec.intent not in project.case_intents
    }
    for aliases in project.case_intents.values():
        intents.update(aliases)
    return intents


def unruled_intents(intents: Iterable[str], rules: Mapping[str, str]) -> list[str]:
    """Intents (sorted) that no `policy_evaluation` rule covers."""
    return sorted({str(i) for i in intents if str(i) and str(i) not in rules})


def unruled_warning(intents: list[str], where: str) -> str:
    shown = ", ".join(intents[:8]) + (f" (+{len(intents) - 8} more)" if len(intents) > 8 else "")
    return (
        f"warning: {where}: no policy_evaluation rule for intent(s) {shown}: policy is not "
        "scored for those cases (the policy floor binds only intents with a rule; add a rule "
        "per intent to the project's contextos-project.yaml, or check with "
        "`contextos-lab project --check`)"
    )
