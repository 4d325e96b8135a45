"""`contextos-lab review | release | rollback`: signed reviews, then the release gate.

`release ID` takes a StrategyProposal (policy bundle / rubric patch) or a proposed
adjustment-layer StrategyRule and hands the stored ReviewVerdicts on it to the library's
release function, which verifies their signatures and refuses without approving compliance,
reliability and security reviews, an approver, a clean replay and seed 000's checklist, and
lints the change against active rules. Release pins the live baseline and opens the monitor
window.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import TYPE_CHECKING

from contextos_lab.cli.common import add_store_options, need, next_step, store_of
from contextos_lab.cli.conventions import add_command, iso_datetime
from contextos_lab.errors import UserError
from contextos_lab.proposals.monitor.window_days import WINDOW_DAYS
from contextos_lab.schemas.vocabulary import ReviewOutcome, ReviewRole

if TYPE_CHECKING:
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.schemas.review import ReviewVerdict
    from contextos_lab.schemas.strategy import StrategyRule
    from contextos_lab.store.experience_store import ExperienceStore

# The release machinery (pandas, the store) loads when a command runs, not for `--help`.


def _review(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.release.reviews import ReviewRefused, record_review, valid_reviews
    from contextos_lab.store.signing import SigningKeyMissing

    store = store_of(args)
    try:
        r = record_review(
            store, args.subject_id, args.role, args.verdict, args.reviewer, args.rationale
        )
    except (ReviewRefused, SigningKeyMissing) as exc:
        raise UserError(str(exc)) from None
    print(f"{r.review_id}: {r.role.value} {r.verdict.value} by {r.reviewer} on {r.subject_id}")
    missing = [x.value for x in ReviewRole if x.value not in valid_reviews(store, r.subject_id)]
    if missing:
        next_step(
            f"contextos-lab review {r.subject_id} --role {missing[0]} --verdict approve "
            "--reviewer NAME --rationale TEXT   (still needed: " + ", ".join(missing) + ")"
        )
    else:
        next_step(f"contextos-lab release {r.subject_id} --approver NAME")
    return 0


def _release(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.monitor.windows import open_window
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.release.release import ReleaseRefused
    from contextos_lab.proposals.release.reviews import stored_reviews
    from contextos_lab.schemas.strategy import StrategyRule

    store = store_of(args)
    bundles = BundleRegistry(args.bundles)
    reviews = stored_reviews(store, args.subject_id)  # verified (and refused) by the release
    rule = store.get(StrategyRule, args.subject_id)
    try:
        if rule is not None:
            done, live_ref = _release_rule(args, store, bundles, rule, reviews)
        else:
            done, live_ref = _release_proposal(args, store, bundles, reviews)
    except ReleaseRefused as exc:
        raise UserError(str(exc)) from None
    window = open_window(store, done, days=args.window_days)
    print(json.dumps(done.model_dump(mode="json", by_alias=True), indent=2, sort_keys=True))
    say = functools.partial(print, file=sys.stderr)
    say(f"released {done.rule_id} (from {args.subject_id}) by {args.approver}")
    say(f"  pinned baseline: {done.pinned_baseline}")
    say(f"  live:            {live_ref}")
    say(
        f"  monitor window:  {window.window_id} {window.opened_at:%Y-%m-%d} → "
        f"{window.closes_at:%Y-%m-%d} on {window.decision_key}"
    )
    next_step(
        f"contextos-lab monitor {done.rule_id}   |   "
        f"contextos-lab rollback {done.rule_id} --reason TEXT --actor NAME"
    )
    return 0


def _release_rule(
    args: argparse.Namespace,
    store: ExperienceStore,
    bundles: BundleRegistry,
    rule: StrategyRule,
    reviews: dict[str, ReviewVerdict],
) -> tuple[StrategyRule, str]:
    """A proposed adjustment-layer rule: (the released rule, the live layer's ref)."""
    from contextos_lab.proposals.release.checklist import latest_verdict
    from contextos_lab.proposals.release.layer_registry import LayerRegistry
    from contextos_lab.proposals.release.layer_release import release_layer_rule
    from contextos_lab.proposals.release.release import lineage_feedback_ids
    from contextos_lab.schemas.strategy import ReplayVerdict

    insight_id = str(rule.trigger.get("from_insight", ""))
    feedback = lineage_feedback_ids(store, insight_id) if insight_id else ()
    done, live, _ = release_layer_rule(
        rule,
        args.approver,
        reviews,
        verdict=need(store, ReplayVerdict, args.verdict)
        if args.verdict
        else latest_verdict(store, rule.rule_id),
        feedback_ids=feedback,
        store=store,
        layers=LayerRegistry.beside(bundles.root),
        at=args.at,
        supersedes=args.supersedes,
    )
    return done, live.ref


def _release_proposal(
    args: argparse.Namespace,
    store: ExperienceStore,
    bundles: BundleRegistry,
    reviews: dict[str, ReviewVerdict],
) -> tuple[StrategyRule, str]:
    """A StrategyProposal: (the released rule, the live bundle's ref)."""
    from contextos_lab.proposals.release.checklist import latest_verdict
    from contextos_lab.proposals.release.release import release_proposal
    from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal

    proposal = need(store, StrategyProposal, args.subject_id)
    verdict = (
        need(store, ReplayVerdict, args.verdict)
        if args.verdict
        else latest_verdict(store, proposal.proposal_id)
    )
    released = release_proposal(
        proposal,
        verdict,
        args.approver,
        reviews,
        store=store,
        bundles=bundles,
        at=args.at,
        supersedes=args.supersedes,
    )
    return released.rule, released.bundle.ref


def _rollback(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.release.release import rollback
    from contextos_lab.schemas.strategy import StrategyRule

    store = store_of(args)
    rule = need(store, StrategyRule, args.rule_id)
    try:
        closed, live = rollback(
            rule,
            store=store,
            bundles=BundleRegistry(args.bundles),
            actor=args.actor,
            reason=args.reason,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    print(f"{closed.rule_id} {closed.status.value}; live: {live.ref}")
    next_step(f"contextos-lab close SOURCE_ID --status still_failing --rule {closed.rule_id}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "review",
        example="contextos-lab review sp_... --role compliance --verdict approve "
        '--reviewer ana --rationale "evidence rule matches policy"',
    )
    p.add_argument("subject_id", help="StrategyProposal id or proposed StrategyRule id")
    p.add_argument("--role", required=True, choices=[r.value for r in ReviewRole])
    p.add_argument("--verdict", required=True, choices=[v.value for v in ReviewOutcome])
    p.add_argument("--reviewer", required=True, help="reviewer identity (signs the verdict)")
    p.add_argument("--rationale", required=True)
    add_store_options(p, bundles=False)
    p.set_defaults(func=_review)

    p = add_command(
        subparsers,
        "release",
        example="contextos-lab release PROPOSAL_OR_RULE_ID --approver lead",
    )
    p.add_argument("subject_id", help="StrategyProposal id or proposed StrategyRule id")
    p.add_argument("--approver", required=True)
    p.add_argument("--verdict", help="ReplayVerdict id (default: the latest for the proposal)")
    p.add_argument("--supersedes", help="active rule this release replaces on purpose")
    p.add_argument("--at", type=iso_datetime, default=None, help="release time (default: now)")
    p.add_argument("--window-days", type=int, default=WINDOW_DAYS, help="monitor window length")
    add_store_options(p)
    p.set_defaults(func=_release)

    p = add_command(
        subparsers,
        "rollback",
        example='contextos-lab rollback RULE_ID --reason "spike" --actor lead',
    )
    p.add_argument("rule_id")
    p.add_argument("--reason", required=True)
    p.add_argument("--actor", required=True)
    add_store_options(p)
    p.set_defaults(func=_rollback)
