"""What notebook 04 shows, computed in one call so the notebook stays free of logic."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.errors import MissingPrerequisite, UserError
from contextos_lab.proposals.compile.compilers import cluster_records, propose_from_insight
from contextos_lab.proposals.policy.bundle import apply_patch
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.release.checklist import latest_verdict, rule_for
from contextos_lab.proposals.release.release import (
    ReleaseRefused,
    record_replay,
    release_proposal,
    send_to_replay,
)
from contextos_lab.proposals.release.reviews import ReviewRefused, sign_reviews
from contextos_lab.proposals.release.why import WhyAnswer, why_rule_exists
from contextos_lab.proposals.replay.goldens import bundled_goldens, load_goldens
from contextos_lab.proposals.replay.replay import replay_frame, resolve_baseline, run_replay_gate
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.lifecycle import LifecycleStatus
from contextos_lab.schemas.review import ReviewVerdict
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal
from contextos_lab.store.signing import load_signing_key, signature_valid

#: The notebook's default sign-off (a parameter: a real review names real reviewers).
APPROVER = "user_change_control_3"
ROLES = ("compliance", "reliability", "security")


def default_reviewers(
    authorised: Sequence[str] | None, approver: str | None = None
) -> dict[str, str]:
    """role → reviewer: the store's authorised operators other than the approver, one per role
    (four eyes; with fewer than three, the release is refused and says why)."""
    people = [
        p for p in (authorised or ["reviewer_1", "reviewer_2", "reviewer_3"]) if p != approver
    ]
    return {role: people[i % len(people)] for i, role in enumerate(ROLES)}


def notebook_signing_key(value: str | None = None) -> tuple[bytes, str]:
    """(key, where it came from): the parameter, else the configured signing key, else a
    throwaway key for this notebook's store (reviews and feedback verify only within it)."""
    if value:
        return value.encode("utf-8"), "the signing_key parameter"
    configured = load_signing_key(required=False)
    if configured is not None:
        return configured, "the configured signing key"
    return secrets.token_hex(32).encode("ascii"), "a throwaway key made for this run"


def ingest_project_data(store: Any, project_dir: str | Path) -> str:
    """A project's raw `data/` files (decisions, feedback, scorecards) into the store, then its
    clusters and insights (what `ingest` and `cluster --store` do), for notebook 04."""
    from contextos_lab.insights.pipeline import analyse
    from contextos_lab.insights.stored import loaded_from_store, store_report
    from contextos_lab.loaders.ingest import store_loaded
    from contextos_lab.loaders.records import load_records

    data = Path(project_dir) / "data"
    for kind in ("decisions", "feedback", "scorecards"):
        path = data / f"{kind}.jsonl"
        if path.is_file():
            store_loaded(kind, load_records(kind, path, None), store)
    loaded = loaded_from_store(store)
    return store_report(analyse(loaded, text_backend=None), loaded, store)


def review_frame(store: Any, subject_id: str) -> pd.DataFrame:
    """The stored ReviewVerdicts on a proposal or rule, and whether each signature verifies."""
    key = store.signing_key
    rows = [
        {
            "role": r.role.value,
            "verdict": r.verdict.value,
            "reviewer": r.reviewer,
            "signed_at": r.signed_at,
            "review_id": r.review_id,
            "valid": signature_valid(r, key),
        }
        for r in store.list(ReviewVerdict)
        if r.subject_id == subject_id
    ]
    return pd.DataFrame(
        rows, columns=["role", "verdict", "reviewer", "signed_at", "review_id", "valid"]
    )


def pick_insight(
    store: Any, insight_id: str | None = None, reason_class: str | None = None
) -> InsightCluster:
    """The insight by id, else the latest of `reason_class`, else the store's largest: the
    notebook's defaults work on any project; a wrong choice lists the valid ones."""
    clusters = list(store.list(InsightCluster))
    if not clusters:
        raise MissingPrerequisite(
            "no InsightCluster in this store: set `project` to a project folder (its data/ is "
            "ingested and clustered) or `build_example` to True"
        )
    if insight_id:
        found = [c for c in clusters if c.insight_id == insight_id]
        choices = ", ".join(c.insight_id for c in clusters)
        what = f"id {insight_id!r}"
    else:
        found = [c for c in clusters if reason_class in (None, c.override_reason_class)]
        choices = ", ".join(sorted({str(c.override_reason_class) for c in clusters}))
        what = f"reason class {reason_class!r}"
    if not found:
        raise UserError(f"no InsightCluster with {what} in this store; valid: {choices}")
    if insight_id or reason_class:
        return found[-1]
    return max(reversed(found), key=lambda c: c.count)


def default_approver(authorised: Sequence[str] | None) -> str:
    """The sign-off: the notebook's usual approver when the project authorises it, else the
    project's last authorised operator (the others review: four eyes)."""
    people = list(authorised or ())
    if not people or APPROVER in people:
        return APPROVER
    return people[-1]


@dataclass
class ReplayView:
    insight: InsightCluster
    proposal: StrategyProposal
    verdict: ReplayVerdict
    replay: pd.DataFrame
    why: WhyAnswer | None
    refused: str | None = None


def run_notebook_04(
    store: Any,
    bundles: BundleRegistry,
    *,
    insight_id: str | None = None,
    reason_class: str | None = None,
    goldens_path: str | Path | None = None,
    release: bool = True,
    actor: str = "notebook_04",
    approver: str | None = None,
    reviewers: Mapping[str, str] | None = None,
    verdicts: Mapping[str, str] | None = None,
) -> ReplayView:
    """Find the insight, reuse or compile its proposal, replay it, and (optionally) release it:
    each reviewer signs a ReviewVerdict with the store's key (`verdicts`: role → approve |
    reject | request_changes, default approve) and the release checks those envelopes; a
    refusal is reported, not raised."""
    insight = pick_insight(store, insight_id, reason_class)
    known = [p for p in store.list(StrategyProposal) if p.insight_id == insight.insight_id]
    proposal = known[-1] if known else None
    if proposal is None:
        records = cluster_records(store, insight)
        proposal = propose_from_insight(insight, bundles=bundles, records=records)
        store.append(proposal)
    goldens = (
        load_goldens(goldens_path) if goldens_path else bundled_goldens(proposal.patch.target_id)
    )
    if proposal.status == LifecycleStatus.proposed:
        proposal = send_to_replay(proposal, actor=actor, store=store)
    verdict = latest_verdict(store, proposal.proposal_id)
    if verdict is None or proposal.status == LifecycleStatus.in_replay:
        verdict = run_replay_gate(proposal, goldens, bundles, store=store)
        proposal = record_replay(proposal, verdict, actor=actor, store=store)
    baseline = resolve_baseline(proposal, bundles)
    frame = replay_frame(goldens, baseline, apply_patch(baseline, proposal.patch))
    refused = None
    if release and rule_for(store, proposal.proposal_id) is None:
        approver = approver or default_approver(sorted(store.authorised_overriders or ()))
        who = reviewers or default_reviewers(sorted(store.authorised_overriders or ()), approver)
        try:
            reviews = sign_reviews(store, proposal.proposal_id, who, verdicts)
            proposal = release_proposal(
                proposal, verdict, approver, reviews, store=store, bundles=bundles, actor=actor
            ).proposal
        except (ReleaseRefused, ReviewRefused) as exc:
            refused = str(exc)
    rule = rule_for(store, proposal.proposal_id)
    why = why_rule_exists(store, rule.rule_id) if rule is not None else None
    return ReplayView(insight, proposal, verdict, frame, why, refused)
