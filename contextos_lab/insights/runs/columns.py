"""One row per decision with the derived columns the run rules read (failed, reason class, ...)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from contextos_lab.insights.split import SplitSpec
from contextos_lab.insights.synthesize import feedback_frame
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE

UNCLASSIFIED = "unclassified"
_FAILED = {TerminalStatus.failed.value, TerminalStatus.denied.value}
_SHOULD_FINISH = {"complete", "approve", "completed", "COMPLETED"}


def runs_frame(
    records: Sequence[DecisionRecord] | pd.DataFrame,
    feedback: pd.DataFrame | Sequence[FeedbackEntry] | None = None,
    split: SplitSpec | None = None,
) -> pd.DataFrame:
    """One row per decision with the derived columns the rules read (failed, reason_class,
    over_escalated, split)."""
    df = (
        records.copy(deep=False)  # copy-on-write: the new columns never reach `records`
        if isinstance(records, pd.DataFrame)
        else EnvelopeList(records, DecisionRecord).to_frame()
    )
    inputs = df["inputs"].map(lambda d: d if isinstance(d, dict) else {})
    fb = feedback_frame(feedback) if feedback is not None else None
    fb_class: pd.Series = pd.Series(dtype="string")
    fb_approve: pd.Series = pd.Series(dtype=bool)
    if fb is not None and not fb.empty:
        first = fb.sort_values("signed_at").drop_duplicates("decision_record_id")
        fb_class = first.set_index("decision_record_id")["override_reason_class"]
        approve = (fb["override_kind"] == "approve") | (
            fb["override_reason_class"] == "over_escalation"
        )
        fb_approve = approve.groupby(fb["decision_record_id"]).any()
    flagged = inputs.map(lambda d: d.get("failed") is True)
    df["failed"] = df["status"].isin(_FAILED) | flagged.astype(bool)
    reason = inputs.map(lambda d: d.get("reason_class")).astype("string")
    reason = reason.fillna(df["record_id"].map(fb_class).astype("string"))
    df["reason_class"] = reason.where(~df["failed"], reason.fillna(UNCLASSIFIED))
    expected = inputs.map(lambda d: str(d.get("expected_decision", "")))
    approved = df["record_id"].map(fb_approve).fillna(False).astype(bool)
    df["over_escalated"] = (df["status"] == TerminalStatus.escalated.value) & (
        expected.isin(_SHOULD_FINISH) | approved
    )
    df["mistake_agent"] = inputs.map(lambda d: d.get("mistake_agent")).astype("string")
    df["phase"] = inputs.map(lambda d: d.get("phase")).astype("string")
    df["timed"] = pd.to_datetime(df["decided_at"], utc=True) != pd.Timestamp(NO_CLOCK)
    df["tool_calls"] = df["tool_calls"].map(tuple)
    df["evidence_refs_missing"] = df["evidence_refs_missing"].map(tuple)
    df["split"] = (split or SplitSpec(0.0)).assign(df["trace_id"]).to_numpy()
    return df


def failure_table(frame: pd.DataFrame, min_cluster_size: int = MIN_CLUSTER_SIZE) -> pd.DataFrame:
    """Every failed run in exactly one (decision_key, reason_class) row: counts add up to the
    failed runs; `meets_min` marks the rows that become failure_cluster insights."""
    failed = frame[frame["failed"]]
    table = (
        failed.groupby(["decision_key", "reason_class"], observed=True)
        .size()
        .rename("count")
        .reset_index()
        .sort_values(["count", "decision_key", "reason_class"], ascending=[False, True, True])
        .reset_index(drop=True)
    )
    table["share_of_failures"] = table["count"] / max(1, len(failed))
    table["meets_min"] = table["count"] >= min_cluster_size
    return table
