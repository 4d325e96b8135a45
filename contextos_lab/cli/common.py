"""What the loop's commands share: the store and bundle options, and loading by id."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TypeVar

from contextos_lab.cli.store import default_store_url
from contextos_lab.errors import UserError

if TYPE_CHECKING:  # stage imports wait for the command to run: `--help` needs none of them
    from contextos_lab.schemas.base import Envelope
    from contextos_lab.store.experience_store import ExperienceStore

E = TypeVar("E", bound="Envelope")


def add_store_options(p: argparse.ArgumentParser, bundles: bool = True) -> None:
    p.add_argument("--store", default=default_store_url(), help="SQLAlchemy URL")
    if bundles:
        from contextos_lab.proposals.policy import DEFAULT_BUNDLES_DIR

        p.add_argument(
            "--bundles",
            default=str(DEFAULT_BUNDLES_DIR),
            help="bundle registry dir (adjustment layers live beside it, in ../layers)",
        )


def store_of(args: argparse.Namespace) -> ExperienceStore:
    from contextos_lab.store.experience_store import ExperienceStore

    try:
        return ExperienceStore(args.store, create=False)
    except (FileNotFoundError, ConnectionError) as exc:
        raise UserError(f"{exc}") from None


def need(store: Any, model: type[E], artifact_id: str) -> E:
    item = store.get(model, artifact_id)
    if item is None:
        raise UserError(f"no {model.__name__} {artifact_id} in {store.url}")
    return item


def next_step(text: str) -> None:
    """The 'where to look next' line every loop command ends with (stderr: stdout stays data)."""
    from contextos_lab.cli.next_steps import complete

    print(f"next: {complete(text)}", file=sys.stderr)
