"""Deterministic generated data: a support-desk history with planted patterns (for the notebook
default and tests) and a fast million-row feedback frame (for the benchmark).

The planted patterns are known, so a reader can check the clusters against the truth: refund
window misjudgements on refunds (rising over the month), a missing refund-window proof, blocked
account updates without identity checks, a repeated order lookup detour, and small refunds
escalated that should have been approved.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from contextos_lab.schemas.base import frame_dtypes
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import ExpectedOutcome, FeedbackEntry, OverrideKind
from contextos_lab.schemas.ids import new_id

EPOCH = datetime(2026, 4, 1, tzinfo=UTC)

THEMES: dict[str, list[str]] = {
    "refund_window_misjudged": [
        "Refund window was counted from the order date instead of the delivery date",
        "The 30 day refund window starts at delivery, the agent used the order date",
        "Agent refused a refund still inside the return window after late delivery",
    ],
    "evidence_missing": [
        "No proof of delivery date was attached before deciding the refund",
        "Decision made without the refund window proof from the carrier",
        "Carrier delivery proof missing, cannot verify refund window",
    ],
    "missing_idv_check": [
        "Account email changed without verifying the customer's identity first",
        "Identity verification step skipped before updating the account address",
        "Agent updated account details with no identity check on file",
    ],
    "over_escalation": [
        "Small refund under the approval limit was escalated to a human for no reason",
        "Escalated a routine low value refund that policy lets the agent approve",
        "Needless escalation, amount well below the approval threshold",
    ],
}


def _outcome(
    rng: np.random.Generator,
    key: str,
    amount: int,
    progress: float,
    inputs: dict[str, object],
) -> tuple[TerminalStatus, str, str | None, list[str], tuple[str, ...]]:
    """(status, decision, failure reason, tools called, evidence missing) of one run; refund
    windows are misjudged more often as the month goes on (`progress`, 0..1)."""
    status, decision, reason = TerminalStatus.completed, "approve", None
    tools: list[str] = ["order_lookup", "policy_eval"]
    missing: tuple[str, ...] = ()
    if key == "support.refund.execute":
        if rng.random() < 0.15:
            missing = ("evidence:refund_window_proof",)
            if rng.random() < 0.6:
                status, decision, reason = TerminalStatus.failed, "deny", "evidence_missing"
        elif rng.random() < 0.05 + 0.25 * progress:
            status, decision, reason = TerminalStatus.failed, "deny", "refund_window_misjudged"
        elif amount < 150 and rng.random() < 0.6:
            status, decision, reason = TerminalStatus.escalated, "escalate", "over_escalation"
            inputs["expected_decision"] = "approve"
    elif key == "support.account.update":
        tools = ["account_lookup", "account_update"]
        if rng.random() < 0.2:
            status, decision, reason = TerminalStatus.blocked, "block", "missing_idv_check"
    else:
        tools = ["order_lookup"]
        if rng.random() < 0.2:
            tools = ["order_lookup", "order_lookup", "order_lookup"]
            if rng.random() < 0.5:
                status, decision = TerminalStatus.failed, "answer"
    return status, decision, reason, tools, missing


def _correction(rng: np.random.Generator, record: DecisionRecord, reason: str) -> FeedbackEntry:
    """An operator's correction of the run, two hours later, in one of the theme's words."""
    texts = THEMES[reason]
    kind = OverrideKind.approve if reason == "over_escalation" else OverrideKind.modify
    overrides = {"decision": "approve"} if kind == OverrideKind.approve else {}
    at, trace_id = record.decided_at, record.trace_id
    return FeedbackEntry(
        id=new_id("fb", at=at + timedelta(hours=2), seed=trace_id),
        trace_id=trace_id,
        decision_record_id=record.record_id,
        decision_key=record.decision_key,
        override_kind=kind,
        override_reason_class=reason,
        override_reason_text=texts[int(rng.integers(0, len(texts)))],
        expected_outcome=ExpectedOutcome(terminal_state="COMPLETED", field_overrides=overrides),
        evidence_refs_seen=("evidence:order",),
        evidence_refs_missing=record.evidence_refs_missing,
        signed_by=f"operator_{int(rng.integers(1, 4))}",
        signed_at=at + timedelta(hours=2),
    )


def support_desk(
    n_runs: int = 600, seed: int = 7, days: int = 30
) -> tuple[list[DecisionRecord], list[FeedbackEntry]]:
    rng = np.random.default_rng(seed)
    records: list[DecisionRecord] = []
    feedback: list[FeedbackEntry] = []
    keys = ["support.refund.execute", "support.account.update", "support.order.status"]
    for i in range(n_runs):
        at = EPOCH + timedelta(minutes=int(rng.integers(0, days * 24 * 60)))
        progress = (at - EPOCH) / timedelta(days=days)
        key = keys[int(rng.choice(3, p=[0.5, 0.25, 0.25]))]
        amount = int(rng.integers(5, 900))
        inputs: dict[str, object] = {"amount": amount}
        status, decision, reason, tools, missing = _outcome(rng, key, amount, progress, inputs)
        trace_id = f"syn-{seed}-{i:06d}"
        if reason is not None:
            inputs["reason_class"] = reason
        record = DecisionRecord(
            record_id=new_id("dr", at=at, seed=trace_id),
            trace_id=trace_id,
            decision_key=key,
            intent=key.rsplit(".", 1)[0],
            status=status,
            decision=decision,
            inputs=inputs,
            evidence_refs=("evidence:order",),
            evidence_refs_missing=missing,
            tool_calls=tuple(tools),
            decided_at=at,
        )
        records.append(record)
        if reason is not None and reason in THEMES:
            feedback.append(_correction(rng, record, reason))
    return records, feedback


def feedback_frame_fast(
    n: int, seed: int = 0, n_keys: int = 40, n_classes: int = 9
) -> pd.DataFrame:
    """`n` feedback rows in the dtypes `EnvelopeList[FeedbackEntry].to_frame()` produces, built
    column-wise (no pydantic per row) so a million rows take seconds."""
    from contextos_lab.schemas.reason_classes import reason_classes

    rng = np.random.default_rng(seed)
    classes = np.array(sorted(reason_classes())[:n_classes], dtype=object)
    keys = np.array([f"support.k{k:02d}.execute" for k in range(n_keys)], dtype=object)
    refs = [f"evidence:r{r}" for r in range(12)]
    ids = [f"fb_2026_05_04_{i:09x}" for i in range(n)]
    seen_idx = rng.integers(0, len(refs), size=(n, 2))
    offsets = rng.integers(0, 90 * 24 * 3600, size=n)
    overrides = rng.integers(0, 3, size=n)
    frame = pd.DataFrame(
        {
            "schema_version": "1.0",
            "id": ids,
            "trace_id": [f"t{i}" for i in range(n)],
            "decision_record_id": [f"dr_{i:x}" for i in range(n)],
            "decision_key": keys[rng.integers(0, n_keys, size=n)],
            "override_kind": "modify",
            "override_reason_class": classes[rng.integers(0, len(classes), size=n)],
            "override_reason_text": None,
            "expected_outcome": [
                {"terminal_state": None, "field_overrides": {"threshold": int(v)}}
                for v in overrides
            ],
            "evidence_refs_seen": [[refs[a], refs[b]] for a, b in seen_idx],
            "evidence_refs_missing": [[] for _ in range(n)],
            "signed_by": "operator_1",
            "signed_at": pd.Timestamp(EPOCH) + pd.to_timedelta(offsets, unit="s"),
            "supersedes": None,
            "signature": None,
        }
    )
    dtypes = frame_dtypes(FeedbackEntry)
    for name, dtype in dtypes.items():
        if not dtype.startswith("datetime64") and dtype != "object":
            frame[name] = frame[name].astype(dtype)
    frame["signed_at"] = frame["signed_at"].astype(dtypes["signed_at"])
    return frame[list(dtypes)]
