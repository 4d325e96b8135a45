"""How the refund desk's adjustment layers change a replayed decision (`replay.layers.replay`).

The kit's layer replay gate calls `replay(record, adjustments)` on the live layer version and
with a proposed rule added, and hashes the returned `{decision, evidence_missing}`. The desk
declares one layer row (`approval_threshold_too_high` -> memory_recall): a record whose
`inputs.same_correction_days_ago` (days since an operator corrected the same escalation) falls
within a recalled correction's `window_days` is settled by the agent (approve) instead of being
sent for approval again. A record without that fact keeps its recorded decision.
"""

from __future__ import annotations

from typing import Any


def replay(record: Any, adjustments: list[dict[str, Any]]) -> dict[str, Any]:
    decision, missing = record.decision, list(record.evidence_refs_missing)
    days = record.inputs.get("same_correction_days_ago")
    if isinstance(days, (int, float)) and decision == "escalate":
        windows = [
            (a.get("value") or {}).get("window_days", 0)
            for a in adjustments
            if a.get("layer") == "memory_recall"
        ]
        if any(days <= w for w in windows):
            decision, missing = "approve", []
    return {"decision": decision, "evidence_missing": missing}
