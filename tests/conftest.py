"""Shared fixtures. Tests that need ../shared/external are marked `external`: they skip on a
user's clone and must run (failing if the data is missing) when CI=true."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

from contextos_lab.harness.reference import SupportDeskHarness, reference_harness
from contextos_lab.harness.replay_sets import load_replay_set
from contextos_lab.store.local_postgres import LocalPostgres, PostgresUnavailable

# Property tests on a shared, loaded machine: no timing (no deadline, no "generation is slow"
# health check). Under CI=true they are also derandomized (a fixed seed per test), so CI runs
# the examples the last clean-clone run passed, not a new random draw; locally each run draws
# afresh and finds what it finds.
settings.register_profile("loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", parent=settings.get_profile("loaded"), derandomize=True, database=None
)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "loaded")

REPO_ROOT = Path(__file__).resolve().parents[1]
#: `shared/` sits beside the clone (<x>/main and <x>/shared); CONTEXTOS_EXTERNAL points
#: elsewhere (a worktree that is not beside shared/).
EXTERNAL = Path(os.environ.get("CONTEXTOS_EXTERNAL") or REPO_ROOT.parent / "shared" / "external")


@pytest.fixture
def external_dir() -> Path:
    if not EXTERNAL.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the external data folder {EXTERNAL} is missing")
        pytest.skip(f"external data not present at {EXTERNAL} (only CI and the team have it)")
    return EXTERNAL


@pytest.fixture
def node() -> str:
    """Node.js for the tests that run the example harness: skipped with a message when absent,
    except under CI=true, where its absence fails (`.ci/run` installs it)."""
    path = shutil.which("node")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Node.js is not installed (.ci/run installs it)")
        pytest.skip("Node.js is not installed (apt-get install -y nodejs)")
    return path


@pytest.fixture(autouse=True)
def _restore_active_project():
    """`cli.main([... --project DIR])` activates a project process-wide; undo it per test."""
    from contextos_lab.domain import use_project

    previous = use_project(None)
    use_project(previous)
    yield
    use_project(previous)


@pytest.fixture(autouse=True)
def _signing_key(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("CONTEXTOS_SIGNING_KEY", "test-signing-key-not-a-secret")
    # the user configuration folder (key file, store anchors): never the tester's own
    monkeypatch.setenv("CONTEXTOS_HOME", str(tmp_path_factory.mktemp("contextos_home")))


@pytest.fixture(scope="session")
def search_cases() -> pd.DataFrame:
    """The committed search set as the harness sees it."""
    return load_replay_set(REPO_ROOT / "search_sets")[0]


@pytest.fixture(scope="session")
def harness() -> SupportDeskHarness:
    return reference_harness()


# -- a real PostgreSQL server (tests marked `postgres`) -----------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    """One throwaway server for the session, on a private port under a temp folder; stopped
    and deleted when the session ends, whatever the tests did (see store/local_postgres.py)."""
    try:
        server = LocalPostgres.launch(settings={"fsync": "off"})
    except PostgresUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no PostgreSQL server can start: {exc}")
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_db(postgres_server: LocalPostgres) -> str:
    """A fresh database on the session server, as a SQLAlchemy URL."""
    return postgres_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
