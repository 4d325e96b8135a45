"""`contextos-lab cluster SOURCE... --out DIR`: notebook 01 without the notebook."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from contextos_lab.insights.pipeline import analyse, load_sources, write_report
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE


def _run(args: argparse.Namespace) -> int:
    since = datetime.fromisoformat(args.since) if args.since else None
    if since is not None and since.tzinfo is None:
        print("error: --since needs a timezone, e.g. 2026-04-01T00:00:00+00:00", file=sys.stderr)
        return 2
    try:
        loaded = load_sources(args.sources)
        report = analyse(
            loaded,
            since=since,
            min_cluster_size=args.min_cluster_size,
            heldout_fraction=args.heldout_fraction,
            text_backend=None if args.text_backend == "none" else args.text_backend,
        )
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = write_report(report, Path(args.out))
    print(
        f"{len(loaded.records)} decisions, {len(loaded.feedback)} feedback, "
        f"{len(loaded.quarantined)} quarantined; {len(report.clusters)} typed clusters, "
        f"{len(report.insights)} insights, {len(report.candidates)} research candidates "
        f"-> {path}"
    )
    if not report.routing.empty:
        print(report.routing[["kind", "signal", "rule", "pattern"]].to_string(index=False))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cluster", help="cluster failures and corrections into insights")
    p.add_argument("sources", nargs="+", help="trace/feedback files or folders, or synthetic")
    p.add_argument("--out", required=True, help="directory for insights.json")
    p.add_argument("--since", default=None, help="ISO time with zone; older data is ignored")
    p.add_argument("--min-cluster-size", type=int, default=MIN_CLUSTER_SIZE)
    p.add_argument("--heldout-fraction", type=float, default=0.3)
    p.add_argument("--text-backend", choices=["tfidf", "embeddings", "none"], default="tfidf")
    p.set_defaults(func=_run)
