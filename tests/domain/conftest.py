from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contextos_lab.domain import DomainConfig, load_project, use_project

REPO_ROOT = Path(__file__).resolve().parents[2]
CODING_AGENT = REPO_ROOT / "examples" / "coding_agent"


@pytest.fixture
def coding_agent() -> Iterator[DomainConfig]:
    """The coding-agent example project, active for the test only."""
    project = load_project(CODING_AGENT)
    previous = use_project(project)
    try:
        yield project
    finally:
        use_project(previous)


@pytest.fixture(autouse=True)
def _restore_active_project() -> Iterator[None]:
    previous = use_project(None)
    use_project(previous)
    yield
    use_project(previous)
