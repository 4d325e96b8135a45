"""Which case intents the policy evaluator has no rule for (and so cannot judge).

An intent missing from the project's `policy_evaluation` table has no violation by construction:
every case of it scores policy 1.0 whatever the harness decides. That is a silent pass, so
`project --check` and `search` name such intents before anything is paid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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
        f"warning: {where}: no policy_evaluation rule for intent(s) {shown}: policy cannot "
        "judge those cases and scores them 1.0 (add a rule per intent to the project's "
        "contextos-project.yaml, or check with `contextos-lab project --check`)"
    )
