"""The common `--project DIR` option, for every command module to add and read.

    from contextos_lab.domain import add_project_option, project_from_args
    add_project_option(parser)              # in register()
    project = project_from_args(args)       # first thing in the command; None: exit 2 printed

`project_from_args` loads the project, makes it the active one (so reason-class validation,
compilers and evaluators follow it) and prints a one-line error on stderr when it is unusable.
"""

from __future__ import annotations

import argparse
import sys

from contextos_lab.domain.active import ENV, resolve_project_path, use_project
from contextos_lab.domain.config import DomainConfig, ProjectError


def add_project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help=f"domain project folder (default: ${ENV}, else the current directory if it is a "
        "project, else the bundled example domain)",
    )


def project_from_args(args: argparse.Namespace) -> DomainConfig | None:
    """The project named by `--project` (or resolved), now active; None after an error line."""
    path = resolve_project_path(getattr(args, "project", None))
    try:
        use_project(path)
    except ProjectError as exc:
        print(f"error: project: {exc}", file=sys.stderr)
        return None
    from contextos_lab.domain.active import active_project

    return active_project()
