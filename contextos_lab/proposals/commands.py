"""`contextos-lab propose | replay | release | rollback | lineage | metrics`.

`lineage RULE_ID` here answers "why does this rule exist?" (the operator corrections behind a
rule); `store lineage` stays the raw upstream tree of any artifact.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from contextos_lab.cli_conventions import add_command
from contextos_lab.proposals.bundle_registry import DEFAULT_BUNDLES_DIR, BundleRegistry
from contextos_lab.proposals.checklist import latest_verdict
from contextos_lab.proposals.compilers import CompileError, cluster_records, propose_from_insight
from contextos_lab.proposals.goldens import load_goldens
from contextos_lab.proposals.metrics import loop_metrics
from contextos_lab.proposals.release import (
    ReleaseRefused,
    record_replay,
    release_proposal,
    rollback,
    send_to_replay,
)
from contextos_lab.proposals.replay import BaselineDrift, run_replay_gate
from contextos_lab.proposals.why import why_rule_exists
from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.lifecycle import LifecycleStatus
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal, StrategyRule
from contextos_lab.store.commands import default_store_url, open_store

E = TypeVar("E", bound=Envelope)


def _err(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _load(args: argparse.Namespace, model: type[E], artifact_id: str) -> tuple[Any, E]:
    """The store and one artifact from it, or `_Exit` after saying what is missing."""
    store = open_store(args.store)
    if store is None:
        raise _Exit(2)
    item = store.get(model, artifact_id)
    if item is None:
        raise _Exit(_err(f"no {model.__name__} {artifact_id}"))
    return store, item


def _exits(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except _Exit as exc:
            return exc.code

    return run


def _dump(item: Any) -> None:
    print(json.dumps(item.model_dump(mode="json", by_alias=True), indent=2, sort_keys=True))


def _find_insight(store: Any, args: argparse.Namespace) -> InsightCluster | None:
    if args.insight:
        return store.get(InsightCluster, args.insight)
    found = [c for c in store.list(InsightCluster) if c.override_reason_class == args.reason_class]
    return found[-1] if found else None


def _propose(args: argparse.Namespace) -> int:
    store = open_store(args.store)
    if store is None:
        return 2
    insight = _find_insight(store, args)
    if insight is None:
        return _err(f"no InsightCluster for {args.insight or args.reason_class}")
    bundles = BundleRegistry(args.bundles)
    try:
        proposal = propose_from_insight(
            insight, bundles=bundles, records=cluster_records(store, insight)
        )
    except CompileError as exc:
        return _err(str(exc))
    stored = store.get(StrategyProposal, proposal.proposal_id)
    if stored is not None:  # same insight, same patch: the same proposal, already filed
        print(f"{proposal.proposal_id} already proposed ({stored.status.value})", file=sys.stderr)
        proposal = stored
    else:
        store.append(proposal)
    _dump(proposal)
    return 0


def _replay(args: argparse.Namespace) -> int:
    store, proposal = _load(args, StrategyProposal, args.proposal_id)
    if proposal.status == LifecycleStatus.proposed:
        proposal = send_to_replay(proposal, actor=args.actor, store=store)
    goldens = load_goldens(args.goldens) if args.goldens else None
    try:
        verdict = run_replay_gate(proposal, goldens, BundleRegistry(args.bundles), store=store)
    except BaselineDrift as exc:
        return _err(str(exc))
    if proposal.status == LifecycleStatus.in_replay:
        record_replay(proposal, verdict, actor=args.actor, store=store)
    _dump(verdict)
    return 0 if verdict.status == "replay_clean" else 1


def _reviews(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, _, verdict = pair.partition("=")
        out[name.strip()] = verdict.strip()
    return out


def _release(args: argparse.Namespace) -> int:
    store, proposal = _load(args, StrategyProposal, args.proposal_id)
    verdict = (
        store.get(ReplayVerdict, args.verdict)
        if args.verdict
        else latest_verdict(store, proposal.proposal_id)
    )
    try:
        done = release_proposal(
            proposal,
            verdict,
            args.approver,
            _reviews(args.review),
            store=store,
            bundles=BundleRegistry(args.bundles),
            supersedes=args.supersedes,
        )
    except ReleaseRefused as exc:
        return _err(str(exc))
    _dump(done.rule)
    print(f"live: {done.bundle.ref}", file=sys.stderr)
    return 0


def _rollback(args: argparse.Namespace) -> int:
    store, rule = _load(args, StrategyRule, args.rule_id)
    try:
        closed, live = rollback(
            rule,
            store=store,
            bundles=BundleRegistry(args.bundles),
            actor=args.actor,
            reason=args.reason,
        )
    except ValueError as exc:
        return _err(str(exc))
    print(f"{closed.rule_id} {closed.status.value}; live: {live.ref}")
    return 0


def _lineage(args: argparse.Namespace) -> int:
    store = open_store(args.store)
    if store is None:
        return 2
    try:
        answer = why_rule_exists(store, args.rule_id)
    except (KeyError, ValueError) as exc:
        return _err(str(exc.args[0]))
    print(answer.render())
    return 0


def _metrics(args: argparse.Namespace) -> int:
    store = open_store(args.store)
    if store is None:
        return 2
    metrics = loop_metrics(store)
    if args.json:
        _dump(metrics)
    else:
        print(metrics.frame().to_string(index=False))
    return 0


def _common(p: argparse.ArgumentParser, bundles: bool = True) -> None:
    p.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    if bundles:
        p.add_argument("--bundles", default=str(DEFAULT_BUNDLES_DIR), help="bundle registry dir")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "propose",
        help="compile a StrategyProposal from an insight",
        example="contextos-lab propose --reason-class policy_too_strict",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--insight", help="InsightCluster id")
    which.add_argument("--reason-class", help="latest cluster of this override_reason_class")
    _common(p)
    p.set_defaults(func=_propose)

    p = add_command(
        subparsers,
        "replay",
        help="run the replay gate on a proposal (exit 1 unless clean)",
        example="contextos-lab replay PROPOSAL_ID",
    )
    p.add_argument("proposal_id")
    p.add_argument("--goldens", help="goldens JSONL (default: the bundled set for the target)")
    p.add_argument("--actor", default="contextos-lab")
    _common(p)
    p.set_defaults(func=_exits(_replay))

    p = add_command(
        subparsers,
        "release",
        help="release a replay-clean, reviewed proposal",
        example="contextos-lab release PROPOSAL_ID --approver lead --review compliance=approve",
    )
    p.add_argument("proposal_id")
    p.add_argument("--approver", required=True)
    p.add_argument(
        "--review",
        action="append",
        default=[],
        metavar="NAME=VERDICT",
        help="reviewer verdict, e.g. compliance=approve (repeat for security, reliability)",
    )
    p.add_argument("--verdict", help="ReplayVerdict id (default: the latest for the proposal)")
    p.add_argument("--supersedes", help="active rule this release replaces on purpose")
    _common(p)
    p.set_defaults(func=_exits(_release))

    p = add_command(
        subparsers,
        "rollback",
        help="restore a rule's pinned baseline bundle",
        example='contextos-lab rollback RULE_ID --reason "refund spike" --actor lead',
    )
    p.add_argument("rule_id")
    p.add_argument("--reason", required=True)
    p.add_argument("--actor", required=True)
    _common(p)
    p.set_defaults(func=_exits(_rollback))

    p = add_command(
        subparsers,
        "lineage",
        help="why does this rule exist? (its corrections)",
        example="contextos-lab lineage RULE_ID",
    )
    p.add_argument("rule_id")
    _common(p, bundles=False)
    p.set_defaults(func=_lineage)

    p = add_command(
        subparsers,
        "metrics",
        help="the improvement loop's metrics from the store",
        example="contextos-lab metrics --json",
    )
    p.add_argument("--json", action="store_true")
    _common(p, bundles=False)
    p.set_defaults(func=_metrics)
