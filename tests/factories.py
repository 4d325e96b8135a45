"""Small builders for valid envelopes, shared by tests of every stage."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from contextos_lab.schemas import DecisionRecord, FeedbackEntry, PreferenceEntry

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def decision_record(i: int = 0, **over: Any) -> DecisionRecord:
    fields: dict[str, Any] = {
        "record_id": f"dr_2026_05_01_r{i}",
        "trace_id": f"trace_{i}",
        "decision_key": "support.refund.execute",
        "intent": "support.refund",
        "status": "COMPLETED",
        "decision": "approve",
        "inputs": {"amount": 120 + i, "days_since_purchase": 10 + i % 40},
        "evidence_refs": [f"order:{i}"],
        "decided_at": T0 + timedelta(minutes=i),
    }
    fields.update(over)
    return DecisionRecord(**fields)


def feedback_entry(i: int = 0, record: DecisionRecord | None = None, **over: Any) -> FeedbackEntry:
    record = record or decision_record(i)
    fields: dict[str, Any] = {
        "id": f"fb_2026_05_09_a{i}",
        "trace_id": record.trace_id,
        "decision_record_id": record.record_id,
        "decision_key": record.decision_key,
        "override_kind": "deny",
        "override_reason_class": "refund_window_misjudged",
        "override_reason_text": "purchase was outside the 30 day window",
        "expected_outcome": {"terminal_state": "DENIED", "field_overrides": {"refund": False}},
        "evidence_refs_seen": list(record.evidence_refs),
        "evidence_refs_missing": ["refund_window_evidence"],
        "signed_by": "user_finance_lead_77",
        "signed_at": T0 + timedelta(hours=1, minutes=i),
    }
    fields.update(over)
    return FeedbackEntry(**fields)


def preference_entries(
    strengths: Mapping[str, float],
    n: int,
    *,
    criterion: str = "helpfulness",
    seed: int = 0,
    tie_band: float = 0.0,
    **over: Any,
) -> list[PreferenceEntry]:
    """`n` judgements between random pairs of subjects, A preferred with its Bradley-Terry
    probability from `strengths` (a draw within `tie_band` of it is a tie): a known truth for
    win-rate estimates to recover. `over` sets a field on every entry."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for k in range(n):
        a, b = rng.choice(names, size=2, replace=False)
        p_a = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
        u = rng.random()
        fields: dict[str, Any] = {
            "preference_id": f"pf_{criterion[:4]}{k:05d}",
            "a_id": f"{a}/case_{k}",
            "b_id": f"{b}/case_{k}",
            "a_subject": a,
            "b_subject": b,
            "preferred": "tie" if abs(u - p_a) < tie_band else ("a" if u < p_a else "b"),
            "criterion": criterion,
            "signed_by": "judge",
            "signed_at": T0,
        }
        fields.update(over)
        out.append(PreferenceEntry(**fields))
    return out
