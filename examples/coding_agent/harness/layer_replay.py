"""How the coding agent's six adjustment layers change a replayed decision.

The kit's layer replay gate (`contextos_lab.proposals.replay.layers`) calls `replay(record,
adjustments)` once on the live layer version and once with a proposed rule added; it hashes the
returned `{decision, status, evidence_missing}` like a policy replay. `adjustments` are the
entries that apply to the record: `{layer, rule_id, applies_to, type, value}`. A record's
`inputs` carry the facts a layer acts on (a record without them keeps its recorded decision):

- prompt            `pr_sections_missing`: sections the PR description lacks; an instruction
                    that names a section makes the agent write it; any left → escalate.
- planner           `edit_tool`, `generated_file`: a tool_preference swaps `over` for
                    `prefer_tool`; editing a generated file with the plain editor is discarded
                    by the build → escalate, else approve.
- retrieval         `docs_missing`: evidence the agent lacked; evidence_injection supplies the
                    kinds it names; any left → deny, naming them.
- tool_selection    `tool`: a tool_restriction denying it → deny, else approve.
- memory_recall     `same_fix_days_ago`: a correction recalled within `window_days` → approve
                    (the agent applies the earlier fix), else escalate (it repeats the mistake).
- budget_allocation `steps`, `context_tokens`: beyond `max_steps` / `context_token_budget`
                    → escalate (the run stops and hands over), else approve.

This is the example's deterministic stand-in for re-running its agent on a recorded trace.
"""

from __future__ import annotations

from typing import Any


def _values(adjustments: list[dict[str, Any]], layer: str) -> list[dict[str, Any]]:
    return [a.get("value") or {} for a in adjustments if a.get("layer") == layer]


def replay(record: Any, adjustments: list[dict[str, Any]]) -> dict[str, Any]:
    facts = record.inputs
    decision, missing = record.decision, list(record.evidence_refs_missing)
    if "pr_sections_missing" in facts:
        text = " ".join(str(v.get("instruction", "")) for v in _values(adjustments, "prompt"))
        missing = [s for s in facts["pr_sections_missing"] if s not in text.lower()]
        decision = "escalate" if missing else "approve"
    if "edit_tool" in facts:
        tool = facts["edit_tool"]
        for v in _values(adjustments, "planner"):
            if v.get("over") == tool:
                tool = v.get("prefer_tool", tool)
        plain_on_generated = facts.get("generated_file") and tool == "editor.edit_file"
        decision, missing = ("escalate" if plain_on_generated else "approve"), []
    if "docs_missing" in facts:
        injected = {k for v in _values(adjustments, "retrieval") for k in v.get("inject", ())}
        missing = [d for d in facts["docs_missing"] if d not in injected]
        decision = "deny" if missing else "approve"
    if "tool" in facts:
        denied = {t for v in _values(adjustments, "tool_selection") for t in v.get("deny", ())}
        decision, missing = ("deny" if facts["tool"] in denied else "approve"), []
    if "same_fix_days_ago" in facts:
        windows = [v.get("window_days", 0) for v in _values(adjustments, "memory_recall")]
        recalled = any(facts["same_fix_days_ago"] <= w for w in windows)
        decision, missing = ("approve" if recalled else "escalate"), []
    if "steps" in facts or "context_tokens" in facts:
        over = False
        for v in _values(adjustments, "budget_allocation"):
            over |= facts.get("steps", 0) > v.get("max_steps", float("inf"))
            over |= facts.get("context_tokens", 0) > v.get("context_token_budget", float("inf"))
        decision, missing = ("escalate" if over else "approve"), []
    return {"decision": decision, "evidence_missing": missing}
