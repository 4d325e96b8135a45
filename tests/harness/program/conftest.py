"""`node`: Node.js for the tests that run the example harness. Skipped with a message when it
is absent, except under CI=true, where its absence fails (`.ci/run` installs it)."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture
def node() -> str:
    path = shutil.which("node")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Node.js is not installed (.ci/run installs it)")
        pytest.skip("Node.js is not installed (apt-get install -y nodejs)")
    return path
