"""Intent rubrics: versioned criteria a decision of an intent is held to, replayed like policy.

An `adjust_intent_rubric` row (`rubric: {criterion, requires_reviewer, weight}`) adds or
changes one criterion of the intent's rubric: "a decision whose input `criterion` is true needs
the review of `requires_reviewer`". The rubric of intent X is kept as the bundle `RUBRIC_X` in
the same registry as policy bundles (one criterion per rule: `applies_to {intent, criterion:
true}`, `then.requires [reviewer]`), so it is versioned, pinned, released, monitored and rolled
back byte for byte like one; its first version is the project's
`harness/policy/bundles/RUBRIC_X.json`, else an empty rubric.

What a rubric scores differs from what a policy decides: a record the rubric's criteria pass
keeps its recorded decision; one a criterion fails goes to review (`escalate`), naming the
missing reviewer in `evidence_missing`. Goldens: `harness/goldens/RUBRIC_X.jsonl`, whose
recorded outputs are what the live rubric scores, the expected ones what the change should.
"""

from __future__ import annotations

from typing import Any

from contextos_lab.proposals.policy.bundle import STATUS_OF, PolicyBundle, PolicyDecision

PREFIX = "RUBRIC_"


def rubric_id(intent: str) -> str:
    return f"{PREFIX}{intent}"


def is_rubric(bundle_id: str) -> bool:
    return bundle_id.startswith(PREFIX)


def empty_rubric(bundle_id: str) -> PolicyBundle:
    """An intent's rubric before any criterion (its first version when the project has none)."""
    return PolicyBundle(bundle_id=bundle_id, version=1, rules=(), change="no criteria yet")


def criterion_rule(rubric: dict[str, Any], key: str, rationale: str) -> dict[str, Any]:
    """The rule body of one criterion (the patch an `adjust_intent_rubric` row compiles to)."""
    criterion = str(rubric.get("criterion") or "").strip()
    if not criterion:
        from contextos_lab.proposals.compile.table import CompileError

        raise CompileError("adjust_intent_rubric needs rubric.criterion (the input it checks)")
    reviewer = rubric.get("requires_reviewer")
    weight = rubric.get("weight")
    return {
        "rule_id": f"{PREFIX}{criterion.upper()}",
        "applies_to": {"intent": key, criterion: True},
        "then": {"allow": True, "requires": [str(reviewer)] if reviewer else []},
        "rationale": rationale + (f" (weight {weight})" if weight is not None else ""),
    }


def evaluate_rubric(bundle: PolicyBundle, record: Any) -> PolicyDecision:
    """The rubric's score of a decision: kept when every applicable criterion's reviewer is
    present, sent to review (escalate) naming the missing reviewers otherwise."""
    from contextos_lab.proposals.policy.bundle import evidence_kinds

    rules = sorted((r for r in bundle.rules if r.matches(record)), key=lambda r: r.rule_id)
    present = evidence_kinds(record)
    needed = sorted({e for r in rules for e in r.then.requires})
    missing = tuple(e for e in needed if e not in present)
    kept = record.decision if record.decision in STATUS_OF else "escalate"
    decision = "escalate" if missing else kept
    fired = [r.rule_id for r in rules if set(r.then.requires) & set(missing)]
    return PolicyDecision(
        decision=decision,
        status=STATUS_OF[decision],
        evidence_missing=missing,
        evidence_checked=tuple(needed),
        fired_rules=tuple(fired),
    )
