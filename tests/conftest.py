"""Shared fixtures. Tests that need ../shared/external are marked `external`: they skip on a
user's clone and must run (failing if the data is missing) when CI=true."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.reference import SupportDeskHarness, reference_harness
from contextos_lab.harness.replay_sets import load_replay_set
from contextos_lab.store.local_postgres import LocalPostgres, PostgresUnavailable

REPO_ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = REPO_ROOT.parent / "shared" / "external"


@pytest.fixture
def external_dir() -> Path:
    if not EXTERNAL.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the external data folder {EXTERNAL} is missing")
        pytest.skip(f"external data not present at {EXTERNAL} (only CI and the team have it)")
    return EXTERNAL


@pytest.fixture(autouse=True)
def _signing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXTOS_SIGNING_KEY", "test-signing-key-not-a-secret")


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
