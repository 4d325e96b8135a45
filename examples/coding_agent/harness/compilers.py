"""The coding agent's own proposal compilers (named in compilers.yaml as `compilers:NAME`).

Loaded from this folder by the kit; a compiler returns the parts of a policy patch (or a whole
StrategyProposal / StrategyRule). Only the standard library is needed here.
"""

from __future__ import annotations

from typing import Any


def quarantine_flaky_tests(insight: Any, *, live: Any, records: Any, context: dict, project: Any):
    """Operators said failing tests were re-run until green: require a flake-triage record
    before merging when the CI run needed retries."""
    rule_id = f"{context['stem']}_FLAKE_TRIAGE"
    return {
        "proposal_class": "add_policy_rule",
        "op": "modify" if live is not None and live.rule(rule_id) else "add",
        "body": {
            "rule_id": rule_id,
            "applies_to": {"intent": insight.decision_key, "ci_retries": {"gt": 0}},
            "then": {"allow": True, "requires": ["ci_test_run", "flake_triage"]},
            "rationale": f"Retried CI needs a flake triage; {insight.count} prior corrections.",
        },
        "rationale": (
            f"Cluster {insight.insight_id}: {insight.count} merges whose failing tests were "
            "re-run until green. Requiring a flake triage when CI needed retries."
        ),
    }
