"""`contextos-lab ingest KIND FILE`: store a file's valid rows, quarantine the rest.

Exit 0 whenever the file could be read, even if every row was quarantined (the quarantine
file says why); exit 2 when the file cannot be read at all, holds no rows, or the store cannot
be used.
The file is read before the store is opened, so an unreadable file never creates a store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from contextos_lab.cli.common import next_step
from contextos_lab.cli.conventions import add_command
from contextos_lab.cli.store import default_store_url, open_store
from contextos_lab.errors import one_line
from contextos_lab.loaders.kinds import FORMATS, KIND_NAMES

if TYPE_CHECKING:  # the store (SQLAlchemy) only once there are rows to write, the schemas
    # (pydantic) only once a file is read: `ingest --help` needs neither (issue 40)
    from contextos_lab.loaders.ingest import IngestReport
    from contextos_lab.store.experience_store import ExperienceStore

#: Quarantined rows listed on the terminal; the quarantine file has them all.
SHOWN = 10
#: What to run after ingesting each kind (the loop's order: decisions, feedback, cluster).
NEXT_AFTER: dict[str, str] = {
    "decisions": "contextos-lab ingest feedback FILE   (then cluster)",
    "feedback": "contextos-lab cluster   (clusters the ingested corrections)",
    "scorecards": "contextos-lab monitor RULE_ID --store {store}   (after a release)",
    "preferences": "contextos-lab gate --spec SPEC --out DIR --store {store}   (cites them as "
    "evidence in the TuningProposal)",
}


def _next_after(args: argparse.Namespace, store: ExperienceStore) -> str:
    """What to run after this ingest, with the project's own files where it has them."""
    from contextos_lab.domain.active import active_project

    data = active_project().data_dir
    if args.kind == "decisions" and (data / "feedback.jsonl").is_file():
        overriders = data / "authorised_overriders.json"
        extra = f" --overriders {overriders}" if overriders.is_file() else ""
        return f"contextos-lab ingest feedback {data / 'feedback.jsonl'}{extra}"
    if args.kind == "scorecards":
        from contextos_lab.schemas.strategy import StrategyRule

        released = [r for r in store.list(StrategyRule) if r.status.value == "released"]
        if released:
            return f"contextos-lab monitor {released[-1].rule_id}"
        return "contextos-lab cluster   (clusters the ingested corrections)"
    return NEXT_AFTER[args.kind].format(store=args.store)


def _error(where: object, reason: object) -> int:
    print(f"error: {one_line(f'{where}: {reason}')}", file=sys.stderr)
    return 2


def _open(url: str, overriders_file: Path | None) -> ExperienceStore | None:
    from contextos_lab.store.experience_store import ExperienceStore
    from contextos_lab.store.signing import load_authorised_overriders

    if overriders_file is None:
        return open_store(url, create=True)
    try:
        allowed = load_authorised_overriders(overriders_file)
    except (OSError, ValueError) as exc:
        _error(overriders_file, exc)
        return None
    if allowed is None:
        _error(overriders_file, "no such file (expected a JSON list of operator ids)")
        return None
    try:
        return ExperienceStore(url, create=True, authorised_overriders=allowed)
    except (FileNotFoundError, ConnectionError) as exc:
        _error(url, exc)
        return None


def _ingest(args: argparse.Namespace) -> int:
    from contextos_lab.loaders.ingest import store_loaded
    from contextos_lab.loaders.readers import UnreadableSource
    from contextos_lab.loaders.records import load_records
    from contextos_lab.store.project_binding import BindingConflict, recorded_project
    from contextos_lab.store.signing import SigningKeyMissing

    try:
        loaded = load_records(args.kind, args.file, args.format)
    except UnreadableSource as exc:
        return _error(exc.path, exc.reason)
    if not loaded.records and not loaded.quarantined:  # empty input never "succeeds"
        return _error(args.file, "no rows: the file is empty")
    store = _open(args.store, args.overriders)
    if store is None:
        return 2
    bound_before = recorded_project(args.store)
    if args.kind == "feedback":
        try:
            _ = store.authorised_overriders  # a malformed default list fails here, not mid-write
        except (OSError, ValueError) as exc:
            return _error("authorised overriders", exc)
    try:
        report = store_loaded(args.kind, loaded, store)
    except (ConnectionError, SigningKeyMissing, BindingConflict) as exc:
        return _error(args.store, exc)
    _print(report)
    bound = recorded_project(args.store)  # said only once a write recorded it (issue 40)
    if bound is not None and bound != bound_before:  # later commands on it read this project
        print(f"store {args.store} now belongs to project {bound.name} ({bound.root})")
    if args.kind in NEXT_AFTER:  # every kind has one; a kind added without one prints none
        next_step(_next_after(args, store))
    return 0  # even when every row was quarantined: the report says so (tests/loaders)


def _print(report: IngestReport) -> None:
    print(report.summary())
    for note in report.notes:
        print(f"note: {note}")
    if report.quarantine_file is None:
        return
    print(f"quarantined rows and reasons: {report.quarantine_file}")
    for row in report.quarantined[:SHOWN]:
        print(f"  {row.describe()[:300]}")
    if len(report.quarantined) > SHOWN:
        print(f"  ... and {len(report.quarantined) - SHOWN} more")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "ingest",
        example=[
            "contextos-lab ingest decisions data/decisions.jsonl --store sqlite:///store.db",
            "contextos-lab ingest feedback data/feedback.csv --overriders overriders.json",
        ],
        description="Store the valid rows of FILE; write the rest with reasons to "
        "FILE.quarantine.jsonl. Re-ingesting a file stores nothing twice.",
    )
    p.add_argument("kind", choices=KIND_NAMES, metavar="KIND", help=", ".join(KIND_NAMES))
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    p.add_argument("--format", choices=FORMATS, default=None, help="override the file extension")
    p.add_argument(
        "--overriders",
        type=Path,
        default=None,
        help="JSON list of operator ids allowed to sign feedback (default: the store's lookup)",
    )
    p.set_defaults(func=_ingest)
