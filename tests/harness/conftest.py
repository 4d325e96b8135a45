from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.reference import SupportDeskHarness, reference_harness
from contextos_lab.harness.replay_sets import load_replay_set

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def search_cases() -> pd.DataFrame:
    return load_replay_set(ROOT / "search_sets")[0]


@pytest.fixture(scope="session")
def harness() -> SupportDeskHarness:
    return reference_harness()
