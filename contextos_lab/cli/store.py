"""`contextos-lab store verify|lineage`: check the chain, walk an artifact back to feedback."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import ContextosError, one_line
from contextos_lab.store.db_url import DEFAULT_STORE_URL, STORE_ENV

if TYPE_CHECKING:  # SQLAlchemy only once a command opens a store, not for `--help`
    from contextos_lab.store.experience_store import ExperienceStore


def default_store_url() -> str:
    return os.environ.get(STORE_ENV, DEFAULT_STORE_URL)


def open_store(url: str, *, create: bool = False) -> ExperienceStore | None:
    """Open the store or print why not (returns None), so commands exit cleanly."""
    from contextos_lab.store.experience_store import ExperienceStore

    try:
        return ExperienceStore(url, create=create)
    except (FileNotFoundError, ConnectionError) as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return None


def _verify(args: argparse.Namespace) -> int:
    """Rows read raw (sqlite3 for a SQLite file): an empty store loads no SQLAlchemy, envelope
    nor project; one with rows is read under the project it recorded (its bodies validate
    against that project's registry), as any command on a store is."""
    from contextos_lab.cli.project_option import project_from_args
    from contextos_lab.store.signing_key import SigningKeyMissing, require_signing_key
    from contextos_lab.store.verify import verify_url

    def key() -> bytes:  # asked only when the store holds something: its project first
        if project_from_args(args) is None:
            raise _NoProject
        return require_signing_key()

    try:  # opened as is: a missing table or a corrupt file is a verdict, not a refusal to open
        report = verify_url(args.store, key)
    except (FileNotFoundError, ConnectionError) as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except _NoProject:  # its error line is printed
        return 2
    except SigningKeyMissing as exc:
        print(f"error: cannot verify {args.store}: {exc}", file=sys.stderr)
        return 2
    print(f"{args.store}: {report}", file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1


class _NoProject(ContextosError):
    """The store's project does not load (`project_from_args` printed why)."""


def _lineage(args: argparse.Namespace) -> int:
    from contextos_lab.store.lineage import lineage

    store = open_store(args.store)
    if store is None:
        return 2
    try:
        tree = lineage(store, args.artifact_id)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    print(tree.render())
    print(f"feedback: {', '.join(tree.feedback_ids) or '(none)'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    store = add_command(
        subparsers,
        "store",
        example="contextos-lab store verify --store sqlite:///out/demo/store.db",
    )
    sub = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    verify = add_command(
        sub,
        "verify",
        help="exit 0 when the hash chain and signatures hold",
        example="contextos-lab store verify --store sqlite:///out/demo/store.db",
    )
    verify.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    verify.set_defaults(func=_verify, loads_project=False)  # `_verify` loads it if needed
    lin = add_command(
        sub,
        "lineage",
        help="walk an artifact's upstream links to its feedback",
        example="contextos-lab store lineage ARTIFACT_ID --store sqlite:///out/demo/store.db",
    )
    lin.add_argument("artifact_id")
    lin.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    lin.set_defaults(func=_lineage)
