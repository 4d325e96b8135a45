from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.example.loop_example import (
    AUTHORISED,
    RefundExample,
    build_refund_example,
)
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.store import ExperienceStore


@pytest.fixture
def store(tmp_path: Path) -> ExperienceStore:
    return ExperienceStore(f"sqlite:///{tmp_path}/exp.db", authorised_overriders=AUTHORISED)


@pytest.fixture
def bundles(tmp_path: Path) -> BundleRegistry:
    return BundleRegistry(tmp_path / "bundles")


@pytest.fixture
def example(store: ExperienceStore, bundles: BundleRegistry) -> RefundExample:
    return build_refund_example(store, bundles)


@pytest.fixture
def unreleased(store: ExperienceStore, bundles: BundleRegistry) -> RefundExample:
    return build_refund_example(store, bundles, release=False)
