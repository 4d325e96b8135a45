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

from contextos_lab.domain.config import DomainConfig, ProjectError
from contextos_lab.domain.loader import BUNDLED_PROJECT, is_project, load_project

ENV = "CONTEXTOS_PROJECT"
_lock = threading.Lock()
_active: DomainConfig | None = None
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


def use_project(project: DomainConfig | Path | str | None) -> DomainConfig | None:
    """Make a project the active one (None: back to resolution); returns the previous one."""
    global _active
    config = (
        project if isinstance(project, DomainConfig) or project is None else cached_project(project)
    )
    with _lock:
        previous, _active = _active, config
    return previous


@contextmanager
def project_scope(project: DomainConfig | Path | str) -> Iterator[DomainConfig]:
    """`with project_scope(path) as cfg:` activates a project for the block only."""
    previous = use_project(project)
    try:
        yield active_project()
    finally:
        use_project(previous)
