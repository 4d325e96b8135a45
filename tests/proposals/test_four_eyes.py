"""Four eyes: three distinct reviewers, none the approver or the author, all authorised; a
rejection moves the proposal to `rejected` and metrics count it."""

from __future__ import annotations

import json

import pytest

from contextos_lab.cli.app import main
from contextos_lab.example.loop_example import APPROVER, AUTHORISED, REVIEWERS
from contextos_lab.proposals.monitor.metrics import loop_metrics
from contextos_lab.proposals.release.release import ReleaseRefused, release_proposal
from contextos_lab.proposals.release.reviews import record_review, sign_reviews
from contextos_lab.schemas import StrategyProposal
from contextos_lab.schemas.lifecycle import LifecycleStatus


def test_one_person_cannot_sign_two_roles(unreleased, store, bundles) -> None:
    pid = unreleased.proposal.proposal_id
    who = REVIEWERS["compliance"]
    record_review(store, pid, "compliance", "approve", who, "ok")
    with pytest.raises(ValueError, match="need distinct reviewers"):
        record_review(store, pid, "security", "approve", who, "ok")


def test_release_refuses_a_shared_reviewer_and_an_unlisted_approver(unreleased, store, bundles):
    pid = unreleased.proposal.proposal_id
    same = {role: REVIEWERS["compliance"] for role in REVIEWERS}
    forged_set = {r: record for r, record in _signed_each(store, pid, same).items()}
    with pytest.raises(ReleaseRefused, match="each role needs its own reviewer"):
        release_proposal(
            unreleased.proposal, unreleased.verdict, APPROVER, forged_set, store=store,
            bundles=bundles,
        )  # fmt: skip
    reviews = sign_reviews(store, pid, REVIEWERS)
    with pytest.raises(ReleaseRefused, match="approver someone_else is not on the authorised"):
        release_proposal(
            unreleased.proposal, unreleased.verdict, "someone_else", reviews, store=store,
            bundles=bundles,
        )  # fmt: skip
    with pytest.raises(ReleaseRefused, match="also reviewed it"):
        release_proposal(
            unreleased.proposal, unreleased.verdict, REVIEWERS["security"], reviews, store=store,
            bundles=bundles,
        )  # fmt: skip


def _signed_each(store, pid, who):
    """Verdicts signed one by one with a store that does not check (as an old store might
    hold), so the release check itself must refuse them."""
    from datetime import UTC, datetime

    from contextos_lab.proposals.release.reviews import _store_key
    from contextos_lab.schemas.review import ReviewVerdict
    from contextos_lab.store.signing import sign_entry

    key = _store_key(store)
    out = {}
    for n, (role, reviewer) in enumerate(who.items()):
        out[role] = sign_entry(
            ReviewVerdict(
                review_id=f"rvw_2026_01_01_shared{n}", subject_id=pid, role=role,
                verdict="approve", reviewer=reviewer, rationale="ok",
                signed_at=datetime.now(UTC),
            ),
            key,
        )  # fmt: skip
    return out


def test_the_author_may_not_review(unreleased, store, bundles) -> None:
    from contextos_lab.proposals.release.release import send_to_replay

    proposal = unreleased.proposal
    if proposal.status == LifecycleStatus.proposed:
        send_to_replay(proposal, actor=REVIEWERS["compliance"], store=store)
    fresh = store.get(StrategyProposal, proposal.proposal_id)
    if fresh.history and fresh.history[0].actor == REVIEWERS["compliance"]:
        with pytest.raises(ValueError, match="may not review it"):
            record_review(store, fresh.proposal_id, "compliance", "approve",
                          REVIEWERS["compliance"], "ok")  # fmt: skip


def test_a_rejection_moves_the_proposal_to_rejected_and_counts(
    unreleased, store, bundles, tmp_path, monkeypatch, capsys
) -> None:
    overriders = tmp_path / "overriders.json"
    overriders.write_text(json.dumps(list(AUTHORISED)))
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(overriders))
    pid = unreleased.proposal.proposal_id
    common = ["--store", store.url]
    assert main(["review", pid, "--role", "compliance", "--verdict", "approve", "--reviewer",
                 REVIEWERS["compliance"], "--rationale", "fine", *common]) == 0  # fmt: skip
    assert main(["review", pid, "--role", "security", "--verdict", "reject", "--reviewer",
                 REVIEWERS["security"], "--rationale", "leaks PII", *common]) == 0  # fmt: skip
    capsys.readouterr()
    rejected = store.get(StrategyProposal, pid)
    assert rejected.status == LifecycleStatus.rejected
    assert [t.to_status for t in rejected.history][-2:] == [
        LifecycleStatus.reviewed,
        LifecycleStatus.rejected,
    ]
    assert "leaks PII" in rejected.history[-1].rationale
    metrics = loop_metrics(store)
    assert metrics.proposals_reviewed == 1 and metrics.adoption_rate == 0.0
    # nothing more to review, and no release
    assert main(["review", pid, "--role", "reliability", "--verdict", "approve", "--reviewer",
                 REVIEWERS["reliability"], "--rationale", "late", *common]) == 2  # fmt: skip
    assert "is rejected" in capsys.readouterr().err
