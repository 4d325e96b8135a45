"""`contextos-lab monitor | close`: the post-release half of the loop.

`monitor RULE_ID` slices the stored production scorecards of the rule's decision key by time
(before release: baseline; in the monitor window: window), records keep / roll back /
supersede / retire with the evidence, and with `--act` carries it out. `close SOURCE_ID`
marks the source pressure fixed / still_failing / invalid / superseded; `fixed` needs a
ReplayPacket (from the store or the project's replay set) naming the pressure.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from contextos_lab.cli.common import add_store_options, need, next_step, store_of
from contextos_lab.cli.conventions import add_command, iso_datetime
from contextos_lab.errors import UserError
from contextos_lab.proposals.monitor.window_days import BASELINE_DAYS
from contextos_lab.schemas.vocabulary import ClosureStatus

if TYPE_CHECKING:
    from contextos_lab.schemas.monitoring import EvaluatorEvidence, MonitorVerdict
    from contextos_lab.schemas.replay import ReplayPacket


def _monitor(args: argparse.Namespace) -> int:
    # SciPy's tests and the store load when a verdict is computed, not for `--help`
    from contextos_lab.proposals.monitor.closure import FROM_MONITOR
    from contextos_lab.proposals.monitor.monitor import act_on_verdict, monitor_window
    from contextos_lab.proposals.monitor.windows import slices, window_of
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.schemas.strategy import StrategyRule

    store = store_of(args)
    rule = need(store, StrategyRule, args.rule_id)
    window = window_of(store, rule.rule_id)
    if window is None:
        raise UserError(f"{rule.rule_id} has no monitor window (was it released?)")
    base, win = slices(store, window, baseline_days=args.baseline_days, until=args.until)
    verdict = monitor_window(
        rule, base, win, store=store, at=args.at, monitor=window, baseline_days=args.baseline_days
    )
    print(
        f"{verdict.monitor_verdict_id}: {verdict.verdict.value} for {rule.rule_id} "
        f"(baseline {window.baseline_ref}; {verdict.n_baseline} baseline vs "
        f"{verdict.n_window} window scorecards on {window.decision_key}; "
        f"{len(verdict.looks)} of {verdict.days} daily looks)"
    )
    print(f"why: {why(verdict)}")
    for reason in verdict.reasons:
        print(f"  - {reason}")
    for name, e in verdict.evidence.items():
        print(f"  {name:<8} {evidence_line(e)}" + ("  WORSE" if e.worse else ""))
    if args.act:
        done = act_on_verdict(
            verdict, rule, store=store, bundles=BundleRegistry(args.bundles), actor=args.actor
        )
        print(f"acted: {done.rule_id} is {done.status.value}")
    source = rule.lineage.insight_id if rule.lineage else "SOURCE_ID"
    status = FROM_MONITOR[verdict.verdict].value
    packet = ""
    if status == "fixed":
        packet = f" --packet {suggest_packet(store, source) or 'PACKET_ID'}"
    next_step(
        f"contextos-lab close {source} --status {status} --rule {rule.rule_id} "
        f"--evidence {verdict.monitor_verdict_id}{packet} --rationale TEXT"
    )
    return 0


def evidence_line(e: EvaluatorEvidence) -> str:
    """Estimate, repeated CI, sequential p against the share spent, boundary, decisive day."""
    p = "n/a" if e.p_value is None else f"{e.p_value:.3g}"
    ci = "" if e.ci_low is None else f" [{e.ci_low:+.3g}, {e.ci_high:+.3g}]"
    spent = "" if e.alpha_spent is None else f" (spent {e.alpha_spent:.2g} of {e.alpha_share:g})"
    z = "" if e.z is None else f" Z={e.z:.2f}"
    bound = "" if e.boundary is None else f" boundary {e.boundary:.2f}"
    day = "" if e.decisive_day is None else f"; decisive by day {e.decisive_day} at this rate"
    return (
        f"baseline {e.baseline_mean:.4g} window {e.window_mean:.4g} delta {e.delta:+.3g}{ci}"
        f" p={p}{spent}{z}{bound}{day}"
    )


def why(verdict: MonitorVerdict) -> str:
    """The verdict in one line."""
    worse = [n for n, e in verdict.evidence.items() if e.worse]
    if worse:
        e = verdict.evidence[worse[0]]
        return (
            f"{worse[0]} crossed its boundary on day {e.crossed_day}: harm shown within its "
            f"error share {e.alpha_share:g}"
        )
    if verdict.window_open:
        return (
            f"no evidence of harm yet after {len(verdict.looks)} of {verdict.days} daily looks "
            "(no boundary crossed); the window stays open"
        )
    return verdict.reasons[0] if verdict.reasons else verdict.verdict.value


def _packet(store: object, packet_id: str) -> ReplayPacket:
    from contextos_lab.domain.active import active_project
    from contextos_lab.harness.replay_sets import read_packets
    from contextos_lab.schemas.replay import ReplayPacket

    found = store.get(ReplayPacket, packet_id)  # type: ignore[attr-defined]
    if found is not None:
        return found
    replay_dir = active_project().replay_dir
    if (replay_dir / "cases.jsonl").is_file():
        for packet in read_packets(replay_dir):
            if packet.packet_id == packet_id:
                return packet
    raise UserError(f"no ReplayPacket {packet_id} in the store or in {replay_dir}/cases.jsonl")


def _close(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.monitor.closure import ClosureRefused, close_source

    store = store_of(args)
    packet = _packet(store, args.packet) if args.packet else None
    try:
        closure = close_source(
            store,
            args.source_id,
            args.status,
            args.rationale,
            rule_id=args.rule,
            evidence_ids=args.evidence,
            packet=packet,
        )
    except ClosureRefused as exc:
        raise UserError(str(exc)) from None
    rec = closure.recurrence
    print(
        f"{closure.closure_id}: {closure.source_kind} {closure.source_id} {closure.status.value} "
        f"(attempt {rec['attempt']}, failed attempts {rec['failed_attempts']}; evidence "
        f"{', '.join(closure.evidence_ids) or 'none'})"
    )
    next_step("contextos-lab metrics   |   contextos-lab bundle --out change-control")
    return 0


def suggest_packet(store: object, source_id: str) -> str | None:
    """A replay case in the project that names one of the source's corrections, if any."""
    from contextos_lab.domain.active import active_project
    from contextos_lab.harness.replay_sets import read_packets
    from contextos_lab.schemas.insight import InsightCluster

    cluster = store.get(InsightCluster, source_id)  # type: ignore[attr-defined]
    replay_dir = active_project().replay_dir
    if cluster is None or not (replay_dir / "cases.jsonl").is_file():
        return None
    names = set(cluster.feedback_ids)
    return next(
        (p.packet_id for p in read_packets(replay_dir) if p.source_pressure.source_ref in names),
        None,
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "monitor",
        example="contextos-lab monitor RULE_ID --act --actor oncall",
    )
    p.add_argument("rule_id")
    p.add_argument("--baseline-days", type=int, default=BASELINE_DAYS)
    p.add_argument("--until", type=iso_datetime, default=None, help="end of the window slice")
    p.add_argument("--at", type=iso_datetime, default=None, help="verdict time (default: now)")
    p.add_argument("--act", action="store_true", help="carry the verdict out (rollback, …)")
    p.add_argument("--actor", default="contextos-lab")
    add_store_options(p)
    p.set_defaults(func=_monitor)

    p = add_command(
        subparsers,
        "close",
        example="contextos-lab close ins_... --status fixed --packet rp_... --evidence mv_... "
        '--rule str_... --rationale "monitor keep"',
    )
    p.add_argument("source_id", help="InsightCluster / insight / replay case id")
    p.add_argument("--status", required=True, choices=[s.value for s in ClosureStatus])
    p.add_argument("--rationale", required=True)
    p.add_argument("--packet", help="ReplayPacket id (required for fixed)")
    p.add_argument("--evidence", action="append", default=[], help="stored artifact id")
    p.add_argument("--rule", help="the rule that addressed it")
    add_store_options(p, bundles=False)
    p.set_defaults(func=_close)
