"""`cluster` gives the same results as before it streamed (digests in cluster_pins.json,
taken from the in-memory code): on the bundled data and, marked `external`, the shared sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.insights.cluster_pins import CASES, EXTERNAL_CASES, PINS, run_case

PINNED = json.loads(PINS.read_text(encoding="utf-8"))


def _check(name: str, external: Path | None) -> None:
    got = run_case(name, external)
    want = PINNED[name]
    pinned, now = want["insights.json"], got["insights.json"]
    differ = [k for k in pinned if now.get(k) != pinned[k]]
    assert not differ, f"{name}: insights.json differs in {differ} (counts {got['counts']})"
    assert got == want


@pytest.mark.parametrize("name", [n for n in CASES if n not in EXTERNAL_CASES])
def test_bundled_cluster_output_is_pinned(name: str) -> None:
    _check(name, None)


@pytest.mark.external
@pytest.mark.parametrize("name", sorted(EXTERNAL_CASES))
def test_external_cluster_output_is_pinned(name: str, external_dir: Path) -> None:
    _check(name, external_dir)
