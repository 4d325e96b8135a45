"""Seed 000's release-readiness checklist, evaluated for one proposal against the store.

Each row is `checked` or `missing` with the reason, so a reviewer sees what blocks release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from contextos_lab.proposals.release.reviews import review_problems, valid_reviews
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.review import ReviewVerdict
from contextos_lab.schemas.strategy import (
    ReplayStatus,
    ReplayVerdict,
    StrategyProposal,
    StrategyRule,
)

ROWS: tuple[tuple[str, str], ...] = (
    (
        "Feedback",
        "Every correction has trace_id, decision_record_id, reason class, expected outcome, "
        "and signer.",
    ),
    (
        "Insight",
        "Cluster size, time window, representative evidence, and affected decision key are "
        "explicit.",
    ),
    ("Proposal", "Patch target, operation, expected impact, and rollback target are typed."),
    (
        "Replay",
        "Candidate changes expected traces and does not introduce hard-gate scorecard regressions.",
    ),
    ("Reviewers", "Compliance, reliability, and security reviewer verdicts are attached."),
    ("Release", "StrategyRule records approver, effective window, baseline version, lineage."),
)


@dataclass(frozen=True)
class Context:
    proposal: StrategyProposal
    insight: InsightCluster | None
    feedback: list[FeedbackEntry]
    verdict: ReplayVerdict | None
    rule: StrategyRule | None
    reviews: dict[str, ReviewVerdict]


def latest_verdict(store: Any, proposal_id: str) -> ReplayVerdict | None:
    found = [v for v in store.list(ReplayVerdict) if v.proposal_id == proposal_id]
    return found[-1] if found else None


def rule_for(store: Any, proposal_id: str) -> StrategyRule | None:
    found = [r for r in store.list(StrategyRule) if r.proposal_id == proposal_id]
    return found[-1] if found else None


def _feedback(c: Context) -> list[str]:
    if c.insight is None:
        return ["no InsightCluster in the store"]
    out = []
    stored = {f.id for f in c.feedback}
    out += [f"{i} not stored" for i in c.insight.feedback_ids if i not in stored]
    for f in c.feedback:
        exp = f.expected_outcome
        if not (exp.terminal_state or exp.field_overrides):
            out.append(f"{f.id} has no expected outcome")
        if not (f.signed_by and f.signature):
            out.append(f"{f.id} is unsigned")
    return out


def _insight(c: Context) -> list[str]:
    i = c.insight
    if i is None:
        return ["no InsightCluster in the store"]
    # evidence: the refs most corrections name, else the corrected traces themselves (a
    # correction that names no evidence ref still points at the run it corrects)
    traced = any(f.trace_id for f in c.feedback)
    out = [] if i.representative_evidence_refs or traced else ["no representative evidence"]
    return out + ([] if i.decision_key else ["no decision key"])


def _proposal(c: Context) -> list[str]:
    p = c.proposal
    out = [] if p.rollback_target else ["no rollback target (pinned baseline) on the proposal"]
    return out + ([] if p.expected_impact else ["no expected impact"])


#: Scorecard evaluators that are floors, not objectives: a negative replay delta blocks release.
FLOORS: tuple[str, ...] = ("policy", "safety")


def verdict_refusals(verdict: ReplayVerdict | None, subject_id: str, missing: str) -> list[str]:
    """Why a replay verdict does not clear `subject_id` for release (empty: it does). Bundle
    and layer releases refuse on the same verdict checks, so both read them from here."""
    if verdict is None:
        return [missing]
    out = []
    if verdict.proposal_id != subject_id:
        out.append(f"verdict {verdict.verdict_id} is for {verdict.proposal_id}")
    if verdict.status != ReplayStatus.replay_clean:
        out.append(f"replay status {verdict.status.value}")
    for floor in FLOORS:
        if getattr(verdict.scorecards_delta, floor) < 0:
            out.append(f"hard-gate regression: {floor} delta below zero")
    return out


def _replay(c: Context) -> list[str]:
    v = c.verdict
    if v is None:
        return ["no replay verdict"]
    out = [] if v.status == ReplayStatus.replay_clean else [f"replay status {v.status.value}"]
    return out + [
        f"{f} delta {getattr(v.scorecards_delta, f):+.3f}"
        for f in FLOORS
        if getattr(v.scorecards_delta, f) < 0
    ]


def _reviewers(c: Context) -> list[str]:
    return review_problems(c.reviews, None)


def _release(c: Context) -> list[str]:
    r = c.rule
    if r is None or r.released_at is None:
        return ["not released"]
    out = []
    for name in ("released_by", "effective_window", "pinned_baseline", "lineage"):
        if getattr(r, name) in (None, ""):
            out.append(f"no {name}")
    if r.lineage is not None and c.insight is not None:
        if set(r.lineage.feedback_ids) != set(c.insight.feedback_ids):
            out.append("lineage feedback ids differ from the insight's")
        if not r.lineage.replay_verdict_id:
            out.append("lineage has no replay verdict id")
    return out


CHECKS: tuple[Callable[[Context], list[str]], ...] = (
    _feedback,
    _insight,
    _proposal,
    _replay,
    _reviewers,
    _release,
)


def release_checklist(store: Any, proposal: StrategyProposal | str) -> pd.DataFrame:
    """check, required, status (checked | missing), reason — one row per seed row."""
    pid = proposal if isinstance(proposal, str) else proposal.proposal_id
    latest = store.get(StrategyProposal, pid)
    if latest is None:
        if isinstance(proposal, str):
            raise KeyError(f"{pid!r} is not a StrategyProposal in the store")
        latest = proposal
    insight = store.get(InsightCluster, latest.insight_id)
    feedback = [store.get(FeedbackEntry, i) for i in (insight.feedback_ids if insight else ())]
    ctx = Context(
        proposal=latest,
        insight=insight,
        feedback=[f for f in feedback if f is not None],
        verdict=latest_verdict(store, pid),
        rule=rule_for(store, pid),
        reviews=valid_reviews(store, pid),
    )
    rows = []
    for (check, required), fn in zip(ROWS, CHECKS, strict=True):
        problems = fn(ctx)
        rows.append(
            {
                "check": check,
                "required": required,
                "status": "missing" if problems else "checked",
                "reason": "; ".join(problems),
            }
        )
    return pd.DataFrame(rows).astype("string")
