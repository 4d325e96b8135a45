"""`contextos-lab propose | replay | lineage | metrics` (release: `cli.release`).

`lineage RULE_ID` here answers "why does this rule exist?" (the operator corrections behind a
rule); `store lineage` stays the raw upstream tree of any artifact.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from contextos_lab.cli.common import next_step
from contextos_lab.cli.conventions import add_command
from contextos_lab.cli.store import default_store_url, open_store
from contextos_lab.errors import ContextosError
from contextos_lab.proposals.policy import DEFAULT_BUNDLES_DIR

# The compilers, the replay gate, the metrics and the schemas (pandas, pydantic, the store) load
# inside the command that runs them: `replay --help` imports none of them.
if TYPE_CHECKING:
    from contextos_lab.schemas.base import Envelope
    from contextos_lab.schemas.insight import InsightCluster
    from contextos_lab.schemas.strategy import StrategyRule

E = TypeVar("E", bound="Envelope")


def _err(message: str) -> int:
    """A user error (unknown id, no cluster, no compiler row, no replayer): one line, exit 2.
    Exit 1 stays the replay verdict "not clean"."""
    print(f"error: {message}", file=sys.stderr)
    return 2


class _Exit(ContextosError):
    """A command step that has already said why it stops; `code` is its exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code=code)


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
    from contextos_lab.schemas.insight import InsightCluster

    if args.insight:
        return store.get(InsightCluster, args.insight)
    found = [c for c in store.list(InsightCluster) if c.override_reason_class == args.reason_class]
    return found[-1] if found else None


def _propose(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.compile.compilers import (
        CompileError,
        cluster_records,
        compile_insight,
    )
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.schemas.strategy import StrategyRule

    store = open_store(args.store)
    if store is None:
        return 2
    insight = _find_insight(store, args)
    if insight is None:
        return _err(
            f"no InsightCluster for {args.insight or args.reason_class} in {args.store} "
            "(run `contextos-lab cluster --store URL` after ingest)"
        )
    bundles = BundleRegistry(args.bundles)
    try:
        made = compile_insight(insight, bundles=bundles, records=cluster_records(store, insight))
    except CompileError as exc:
        return _err(str(exc))
    stored = store.get(type(made), made.artifact_id)
    if stored is not None:  # same insight, same patch: the same proposal, already filed
        print(f"{made.artifact_id} already proposed ({stored.status.value})", file=sys.stderr)
        made = stored
    else:
        store.append(made)
    _dump(made)
    if isinstance(made, StrategyRule):
        assert made.adjustment is not None
        print(
            f"proposed {made.adjustment.layer.value} StrategyRule {made.rule_id} from "
            f"{insight.insight_id}",
            file=sys.stderr,
        )
        next_step(f"contextos-lab replay {made.rule_id}   (its layer goldens, then review x3)")
    else:
        print(f"proposed {made.proposal_id} ({made.proposal_class.value})", file=sys.stderr)
        next_step(f"contextos-lab replay {made.proposal_id}")
    return 0


def _replay_layer_rule(args: argparse.Namespace, store: Any, rule: StrategyRule) -> int:
    """A proposed adjustment-layer rule: the project's layer goldens on the live layer
    version and on it plus the rule (`replay.layers`)."""
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.release.layer_registry import LayerRegistry
    from contextos_lab.proposals.replay.goldens import load_goldens
    from contextos_lab.proposals.replay.layers import LayerReplayError, run_layer_replay
    from contextos_lab.proposals.replay.replay import BaselineDrift

    layers = LayerRegistry.beside(BundleRegistry(args.bundles).root)
    goldens = load_goldens(args.goldens) if args.goldens else None
    try:
        verdict = run_layer_replay(
            rule,
            layers,
            goldens,
            store=store,
            supersedes=args.supersedes,
            reason_class=_reason_class(store, str(rule.trigger.get("from_insight", ""))),
        )
    except (LayerReplayError, BaselineDrift) as exc:
        return _err(str(exc))
    _dump(verdict)
    print(
        f"{verdict.verdict_id}: {verdict.status.value} ({verdict.changed_to_expected} changed "
        f"to expected, {verdict.changed_unexpected} unexpected of {verdict.goldens_total} "
        f"{rule.adjustment.layer.value if rule.adjustment else ''} goldens)",
        file=sys.stderr,
    )
    if verdict.status == "replay_clean":
        next_step(
            f"contextos-lab review {rule.rule_id} --role compliance --verdict approve "
            "--reviewer NAME --rationale TEXT   (then reliability and security)"
        )
    else:
        next_step(f"read the details above; the rule cannot be released ({rule.rule_id})")
    return 0 if verdict.status == "replay_clean" else 1


def _reason_class(store: Any, insight_id: str) -> str | None:
    """The class a proposal fixes: goldens expecting another class's fix must not change."""
    from contextos_lab.schemas.insight import InsightCluster

    insight = store.get(InsightCluster, insight_id) if insight_id else None
    return insight.override_reason_class if insight is not None else None


def _replay(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.monitor.closure import close_failed_replay
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.release.release import record_replay, send_to_replay
    from contextos_lab.proposals.replay.goldens import load_goldens
    from contextos_lab.proposals.replay.replay import BaselineDrift, run_replay_gate
    from contextos_lab.schemas.lifecycle import LifecycleStatus
    from contextos_lab.schemas.strategy import StrategyProposal, StrategyRule

    store = open_store(args.store)
    if store is None:
        return 2
    rule = store.get(StrategyRule, args.proposal_id)
    if rule is not None:
        return _replay_layer_rule(args, store, rule)
    store, proposal = _load(args, StrategyProposal, args.proposal_id)
    if proposal.status == LifecycleStatus.proposed:
        proposal = send_to_replay(proposal, actor=args.actor, store=store)
    goldens = load_goldens(args.goldens) if args.goldens else None
    try:
        verdict = run_replay_gate(
            proposal,
            goldens,
            BundleRegistry(args.bundles),
            store=store,
            reason_class=_reason_class(store, proposal.insight_id),
        )
    except BaselineDrift as exc:
        return _err(str(exc))
    if proposal.status == LifecycleStatus.in_replay:
        record_replay(proposal, verdict, actor=args.actor, store=store)
    _dump(verdict)
    print(
        f"{verdict.verdict_id}: {verdict.status.value} ({verdict.changed_to_expected} changed "
        f"to expected, {verdict.changed_unexpected} unexpected of {verdict.goldens_total})",
        file=sys.stderr,
    )
    if verdict.status == "replay_clean":
        next_step(
            f"contextos-lab review {proposal.proposal_id} --role compliance --verdict approve "
            "--reviewer NAME --rationale TEXT   (then reliability and security)"
        )
    else:
        close_failed_replay(store, proposal, verdict)
        next_step(f"read the details above; contextos-lab close {proposal.insight_id} ...")
    return 0 if verdict.status == "replay_clean" else 1


def _lineage(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.release.why import why_rule_exists

    store = open_store(args.store)
    if store is None:
        return 2
    try:
        answer = why_rule_exists(store, args.rule_id)
    except (KeyError, ValueError) as exc:
        return _err(str(exc.args[0]))
    print(answer.render())
    next_step(
        f"contextos-lab monitor {args.rule_id}   |   contextos-lab store lineage {args.rule_id}"
    )
    return 0


def _metrics(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.monitor.metrics import loop_metrics

    store = open_store(args.store)
    if store is None:
        return 2
    metrics = loop_metrics(store)
    if args.json:
        _dump(metrics)
    else:
        print(metrics.frame().to_string(index=False))
    next_step("contextos-lab bundle --out change-control   (the change-control bundle for review)")
    return 0


def _common(p: argparse.ArgumentParser, bundles: bool = True) -> None:
    p.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    if bundles:
        p.add_argument("--bundles", default=str(DEFAULT_BUNDLES_DIR), help="bundle registry dir")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "propose",
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
        example="contextos-lab replay PROPOSAL_OR_RULE_ID",
    )
    p.add_argument("proposal_id", help="StrategyProposal id or proposed layer StrategyRule id")
    p.add_argument(
        "--goldens",
        help="goldens JSONL (default: the project's set for the bundle, or LAYER_<layer>.jsonl)",
    )
    p.add_argument("--actor", default="contextos-lab")
    p.add_argument("--supersedes", help="layer rule: the active rule it is to replace")
    _common(p)
    p.set_defaults(func=_exits(_replay))

    p = add_command(
        subparsers,
        "lineage",
        example="contextos-lab lineage RULE_ID",
    )
    p.add_argument("rule_id")
    _common(p, bundles=False)
    p.set_defaults(func=_lineage)

    p = add_command(
        subparsers,
        "metrics",
        example="contextos-lab metrics --json",
    )
    p.add_argument("--json", action="store_true")
    _common(p, bundles=False)
    p.set_defaults(func=_metrics)
