"""Seed 000's refund example, end to end on bundled data (used by tests, notebook 04, demo).

Sixteen refund decisions recorded on POLICY_RETURNS_V4 v1 are the goldens (their outputs_hash
comes from `replay_decision_record` on that version). Six of them approved refunds outside the
30-day window on an order lookup alone; operators override each (`refund_window_misjudged`) →
insight → the seed's proposal → replay_clean → released rule whose lineage lists exactly those
six feedback ids. `python -m contextos_lab.example.loop_example` rewrites the goldens
file. The bundle, goldens, registry and compiler row live in the bundled project (`project/`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.insights.synthesize import synthesize_insights
from contextos_lab.proposals.compile.compilers import propose_from_insight
from contextos_lab.proposals.policy.bundle import PolicyBundle
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.release.release import (
    Release,
    record_replay,
    release_proposal,
    send_to_replay,
)
from contextos_lab.proposals.release.reviews import sign_reviews
from contextos_lab.proposals.replay.goldens import (
    ExpectedOutcome,
    GoldenCase,
    dump_goldens,
    load_goldens,
)
from contextos_lab.proposals.replay.replay import replay_decision_record, run_replay_gate
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal

BUNDLES_DIR = BUNDLED_PROJECT / "harness" / "policy" / "bundles"
GOLDENS_DIR = BUNDLED_PROJECT / "harness" / "goldens"
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
OVERRIDERS: tuple[str, ...] = ("user_finance_lead_77", "user_support_ops_12")
APPROVER = "user_change_control_3"
SECURITY_OWNER = "user_security_owner_5"
#: Everyone the example's store authorises: the operators who sign feedback, a third reviewer
#: and the approver (four eyes: three distinct reviewers, none of them the approver).
AUTHORISED: tuple[str, ...] = (*OVERRIDERS, SECURITY_OWNER, APPROVER)
#: Who signs each review in the example (authorised operators; not the approver).
REVIEWERS: dict[str, str] = {
    "compliance": OVERRIDERS[0],
    "reliability": OVERRIDERS[1],
    "security": SECURITY_OWNER,
}
WINDOW_DENY = ExpectedOutcome(decision="deny", evidence_missing=("refund_window_evidence",))
ORD, WIN, IDV, HUM = "order_lookup", "refund_window_evidence", "idv_check", "human_approval"

#: (amount, days since purchase, evidence kinds, payment method, expected post-patch, corrected)
SPECS: tuple[tuple[float, int, tuple[str, ...], str, ExpectedOutcome | None, bool], ...] = (
    (120, 5, (ORD, WIN, IDV), "card", None, False),
    (80, 12, (ORD, WIN), "card", None, False),
    (450, 20, (ORD, WIN), "card", None, False),
    (1500, 3, (ORD, WIN, IDV), "card", None, False),
    (60, 2, (WIN,), "card", None, False),
    (200, 8, (ORD, WIN), "gift_card", None, False),
    (2400, 6, (ORD, WIN, HUM, IDV), "card", None, False),
    (140, 41, (ORD,), "card", WINDOW_DENY, True),
    (220, 52, (ORD,), "card", WINDOW_DENY, True),
    (310, 63, (ORD,), "card", WINDOW_DENY, True),
    (180, 75, (ORD,), "card", WINDOW_DENY, True),
    (260, 88, (ORD,), "card", WINDOW_DENY, True),
    (380, 95, (ORD,), "card", WINDOW_DENY, True),
    (90, 33, (ORD, WIN), "card", None, False),
    (1200, 50, (ORD,), "card", WINDOW_DENY, False),
    (700, 10, (ORD, WIN), "card", None, False),
)


def baseline_bundle() -> PolicyBundle:
    return PolicyBundle.from_file(BUNDLES_DIR / "POLICY_RETURNS_V4.json")


def build_goldens() -> list[GoldenCase]:
    """The golden records, each carrying the outputs_hash v1 produces for it."""
    v1 = baseline_bundle()
    out = []
    for n, (amount, days, evidence, method, expected, corrected) in enumerate(SPECS, start=1):
        draft = DecisionRecord(
            record_id=f"dr_2026_05_04_g{n:02d}",
            trace_id=f"trace_refund_g{n:02d}",
            decision_key="support.refund.execute",
            intent="support.refund",
            status="COMPLETED",
            decision="approve",
            inputs={"amount": amount, "days_since_purchase": days, "payment_method": method},
            evidence_refs=tuple(f"{kind}:g{n:02d}" for kind in evidence),
            policy_version=v1.ref,
            decided_at=T0 + timedelta(hours=n),
        )
        replayed = replay_decision_record(draft, v1)
        record = DecisionRecord.model_validate(
            {
                **draft.model_dump(),
                "decision": replayed.decision.decision,
                "status": replayed.decision.status,
                "evidence_refs_missing": replayed.decision.evidence_missing,
                "outputs_hash": replayed.outputs_hash,
            }
        )
        note = "operator-corrected: outside the window" if corrected else None
        out.append(GoldenCase(record=record, expected_post_patch_outcome=expected, note=note))
    return out


def corrected_records(goldens: list[GoldenCase]) -> list[DecisionRecord]:
    return [g.record for g, spec in zip(goldens, SPECS, strict=True) if spec[5]]


def refund_feedback(records: list[DecisionRecord]) -> list[FeedbackEntry]:
    """One signed-by-an-authorised-operator override per wrongly approved refund."""
    return [
        FeedbackEntry(
            id=f"fb_2026_05_09_w{n:02d}",
            trace_id=r.trace_id,
            decision_record_id=r.record_id,
            decision_key=r.decision_key,
            override_kind="deny",
            override_reason_class="refund_window_misjudged",
            override_reason_text=(
                f"purchase was {r.inputs['days_since_purchase']} days ago, outside the 30-day "
                "window; no window evidence"
            ),
            expected_outcome={"terminal_state": "DENIED", "field_overrides": {"refund": False}},
            evidence_refs_seen=r.evidence_refs,
            evidence_refs_missing=("refund_window_evidence",),
            signed_by=OVERRIDERS[n % len(OVERRIDERS)],
            signed_at=datetime(2026, 5, 9, 9, 0, tzinfo=UTC) + timedelta(minutes=17 * n),
        )
        for n, r in enumerate(records, start=1)
    ]


@dataclass(frozen=True)
class RefundExample:
    goldens: list[GoldenCase]
    feedback: list[FeedbackEntry]
    insight: InsightCluster
    proposal: StrategyProposal
    verdict: ReplayVerdict
    release: Release


def build_refund_example(
    store: Any, bundles: BundleRegistry, *, release: bool = True, actor: str = "user_loop_bot"
) -> RefundExample:
    """Write the example into `store` (its overriders must include OVERRIDERS) and run it."""
    goldens = load_goldens(GOLDENS_DIR / "POLICY_RETURNS_V4.jsonl")
    feedback = refund_feedback(corrected_records(goldens))
    store.append_many([g.record for g in goldens])
    store.append_many(feedback)
    stored = [store.get(FeedbackEntry, f.id) for f in feedback]
    clusters = synthesize_insights(stored, store=store)
    insight = next(c for c in clusters if c.override_reason_class == "refund_window_misjudged")
    day = datetime(2026, 5, 11, 9, 0, tzinfo=UTC)
    proposal = propose_from_insight(insight, bundles=bundles)
    store.append(proposal)
    proposal = send_to_replay(proposal, actor=actor, store=store, at=day)
    verdict = run_replay_gate(proposal, goldens, bundles, store=store)
    proposal = record_replay(proposal, verdict, actor=actor, store=store, at=day)
    done = None
    if release:
        reviews = sign_reviews(store, proposal.proposal_id, REVIEWERS, at=day)
        done = release_proposal(
            proposal,
            verdict,
            APPROVER,
            reviews,
            store=store,
            bundles=bundles,
            actor=actor,
            at=day + timedelta(days=1),
        )
        proposal = done.proposal
    return RefundExample(goldens, stored, insight, proposal, verdict, done)  # type: ignore[arg-type]


if __name__ == "__main__":
    target = Path(GOLDENS_DIR) / "POLICY_RETURNS_V4.jsonl"
    dump_goldens(build_goldens(), target)
    print(f"wrote {target}")
