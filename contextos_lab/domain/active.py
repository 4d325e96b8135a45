"""The active project: the one the registry, compilers and evaluators read when not told.

A process-wide setting (not a ContextVar: worker threads must see the same domain as the
command that started them). Resolution when nothing was activated: `$CONTEXTOS_PROJECT`, else
the current directory if it has the layout, else the bundled example domain.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contextos_lab.domain import ENV
from contextos_lab.domain.config import DomainConfig, ProjectError
from contextos_lab.domain.loader import BUNDLED_PROJECT, is_project, load_project

__all__ = [
    "ENV",
    "active_project",
    "cached_project",
    "project_named",
    "project_scope",
    "resolve_project_path",
    "use_project",
]
_lock = threading.Lock()
_active: DomainConfig | None = None
#: False while the active project is the CLI's last resort (nothing named it): a store's first
#: write is then refused rather than bound to a project nobody chose (`project_named`)
_named = True
_cache: dict[Path, DomainConfig] = {}
_resolved: dict[tuple[str | None, str], DomainConfig] = {}


def resolve_project_path(explicit: str | Path | None = None) -> Path:
    """`explicit`, else `$CONTEXTOS_PROJECT`, else cwd if it is a project, else the bundled one."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser().resolve()
    cwd = Path.cwd()
    return cwd.resolve() if is_project(cwd) else BUNDLED_PROJECT


def cached_project(path: Path | str) -> DomainConfig:
    """`load_project`, once per folder per process."""
    root = Path(path).expanduser().resolve()
    with _lock:
        if root not in _cache:
            _cache[root] = load_project(root)
        return _cache[root]


def active_project() -> DomainConfig:
    """The project set by `use_project`, else the one `resolve_project_path()` finds."""
    if _active is not None:
        return _active
    # validators call this per row: resolve and load once per ($CONTEXTOS_PROJECT, cwd)
    where = (os.environ.get(ENV), os.getcwd())
    found = _resolved.get(where)
    if found is not None:
        return found
    path = resolve_project_path()
    try:
        found = _resolved[where] = cached_project(path)
    except ProjectError:
        if path == BUNDLED_PROJECT:
            raise
        raise ProjectError(
            f"{path} (from ${ENV} or the current directory) is not a usable project"
        ) from None
    return found


def use_project(
    project: DomainConfig | Path | str | None, *, named: bool = True
) -> DomainConfig | None:
    """Make a project the active one (None: back to resolution); returns the previous one.

    `named=False`: nobody chose it (the CLI fell back to the bundled example), see
    `project_named`.
    """
    global _active, _named
    config = (
        project if isinstance(project, DomainConfig) or project is None else cached_project(project)
    )
    with _lock:
        previous, _active, _named = _active, config, named
    return previous


def project_named() -> bool:
    """Whether someone chose the active project (`--project`, `$CONTEXTOS_PROJECT`, a project
    folder as the current directory, a store's record, or any library call): a store's first
    write binds it for good, so it must not bind the bundled example by default."""
    return _named


@contextmanager
def project_scope(project: DomainConfig | Path | str) -> Iterator[DomainConfig]:
    """`with project_scope(path) as cfg:` activates a project for the block only."""
    previous = use_project(project)
    try:
        yield active_project()
    finally:
        use_project(previous)
