"""The common `--project DIR` option, for every command module to add and read.

    from contextos_lab.cli.project_option import add_project_option, project_from_args
    add_project_option(parser)              # in register()
    project = project_from_args(args)       # first thing in the command; None: exit 2 printed

`project_from_args` loads the project, makes it the active one (so reason-class validation,
compilers and evaluators follow it) and prints a one-line error on stderr when it is unusable.
A command on a store (`--store URL`) uses the project the store recorded at its first write
(`store.project_binding`): a `--project` (or `$CONTEXTOS_PROJECT`) naming another one is
refused, naming both; the bundled example is never a silent stand-in for it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from contextos_lab.domain import ENV

if TYPE_CHECKING:  # the project loads when a command runs: `--help` needs only ENV's name
    from contextos_lab.domain.config import DomainConfig


def add_project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help=f"domain project folder (default: the project the --store recorded, else ${ENV}, "
        "else the current directory if it is a project, else the bundled example domain)",
    )


def _store_project(url: str, explicit: str | None, label: str) -> tuple[DomainConfig, bool]:
    """The project a store belongs to (or, for a store without one yet, the resolved one), and
    whether the store recorded one."""
    from contextos_lab.domain.active import cached_project, resolve_project_path
    from contextos_lab.domain.config import ProjectError
    from contextos_lab.domain.loader import BUNDLED_PROJECT, is_project
    from contextos_lab.store.binding_read import binding_conflict, recorded_project

    recorded = recorded_project(url)
    if recorded is None:
        return cached_project(resolve_project_path(explicit)), False
    if explicit:
        project = cached_project(resolve_project_path(explicit))
        named = label
    else:
        root = recorded.root
        if not is_project(root):
            bundled = cached_project(BUNDLED_PROJECT)
            if bundled.name != recorded.name:
                raise ProjectError(
                    f"store {url} belongs to project {recorded.describe()}, whose folder is "
                    f"gone: pass --project DIR (a copy of project {recorded.name})"
                )
            root = BUNDLED_PROJECT  # the bundled example, installed elsewhere
        project = cached_project(root)
        named = "its folder"
    why = binding_conflict(recorded, project)
    if why is not None:
        raise ProjectError(
            f"{named} names project {project.name} ({project.root}) but store {url} belongs to "
            f"project {recorded.describe()} ({why}); drop --project or use another --store"
        )
    return project, True


def project_from_args(args: argparse.Namespace) -> DomainConfig | None:
    """The project named by `--project` (or the store's, or resolved), now active; None after
    an error line."""
    from contextos_lab.domain.active import cached_project, resolve_project_path, use_project
    from contextos_lab.domain.config import ProjectError
    from contextos_lab.domain.loader import is_project

    explicit = getattr(args, "project", None)
    label = "--project" if explicit else f"${ENV}"
    explicit = explicit or os.environ.get(ENV) or None
    url = getattr(args, "store", None)
    try:
        project, recorded = (
            _store_project(url, explicit, label)
            if isinstance(url, str) and url
            else (cached_project(resolve_project_path(explicit)), False)
        )
        # the bundled example as a last resort reads fine, but never binds a new store
        fallback = not explicit and not recorded and not is_project(Path.cwd())
        use_project(project, named=not fallback)
    except ProjectError as exc:
        print(f"error: project: {exc}", file=sys.stderr)
        return None
    return project
