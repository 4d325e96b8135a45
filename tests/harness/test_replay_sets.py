"""Replay sets: committed, reproducible from the seeded generator, hashed, and disjoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.harness.reference.generate_cases import SEED, generate
from contextos_lab.harness.replay_sets import (
    CASE_COLUMNS,
    ReplaySetError,
    ReplaySetOverlapError,
    check_disjoint,
    load_replay_pair,
    load_replay_set,
    read_packets,
    write_replay_set,
)

ROOT = Path(__file__).resolve().parents[2]


def test_committed_sets_load_disjoint_and_sized() -> None:
    search, heldout = load_replay_pair(ROOT / "search_sets", ROOT / "heldout")
    assert len(search) == len(heldout) == 2000
    assert list(search.columns) == list(CASE_COLUMNS)
    assert not set(search.content_hash) & set(heldout.content_hash)
    assert not set(search.case_id) & set(heldout.case_id)
    for name in ("search_sets", "heldout"):
        assert (ROOT / name / "cases.jsonl").stat().st_size < 3_000_000


def test_generator_reproduces_the_committed_sets() -> None:
    search, heldout = generate(SEED)
    for name, packets in (("search_sets", search), ("heldout", heldout)):
        manifest = json.loads((ROOT / name / "manifest.json").read_text())
        assert manifest["seed"] == SEED
        committed = read_packets(ROOT / name)
        assert [p.model_dump() for p in committed] == [p.model_dump() for p in packets]


def test_realistic_mix_and_edge_cases(search_cases: pd.DataFrame) -> None:
    mix = search_cases.intent.value_counts(normalize=True)
    assert 0.30 < mix["refund"] < 0.40 and mix.min() > 0.08
    edges = pd.Series([e for es in search_cases.edge_cases for e in es]).value_counts()
    assert {"near_limit", "near_window", "injected_note"} <= set(edges.index)
    assert set(search_cases.expected_decision) == {"approve", "deny", "escalate", "answer"}
    assert search_cases.forbidden_strings.map(len).gt(0).mean() > 0.9
    for request, forbidden in zip(search_cases.request, search_cases.forbidden_strings,
                                  strict=True):
        assert not any(f in request for f in forbidden)


def test_overlap_is_refused_naming_shared_ids() -> None:
    a = {"s-1": "h1", "s-2": "h2", "s-3": "h3"}
    b = {"h-1": "h9", "h-2": "h2", "s-3": "h7"}
    with pytest.raises(ReplaySetOverlapError) as err:
        check_disjoint(a, b)
    assert "s-2=h-2" in str(err.value) and "s-3" in str(err.value)
    assert err.value.shared == (("s-2", "h-2"), ("s-3", "s-3"))
    check_disjoint(a, {"h-1": "h9"})


def test_a_case_copied_into_heldout_is_caught(tmp_path: Path) -> None:
    search = read_packets(ROOT / "search_sets")[:5]
    heldout = read_packets(ROOT / "heldout")[:5]
    stolen = search[2].model_copy(update={"packet_id": "h-99999"})
    write_replay_set(tmp_path / "s", search, {"split": "search"})
    write_replay_set(tmp_path / "h", [*heldout, stolen], {"split": "heldout"})
    with pytest.raises(ReplaySetOverlapError, match=f"{search[2].packet_id}=h-99999"):
        load_replay_pair(tmp_path / "s", tmp_path / "h")


def test_tampered_set_is_refused(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "search_sets", tmp_path / "s")
    path = tmp_path / "s" / "cases.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace('"decision":"', '"decision":"x', 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplaySetError, match="differ from manifest"):
        load_replay_set(tmp_path / "s")


def test_unknown_case_fields_are_passed_through(tmp_path: Path) -> None:
    packets = read_packets(ROOT / "search_sets")[:3]
    tagged = [
        p.model_copy(update={"case": {**p.case, "customer_tier": f"tier{i}"}})
        for i, p in enumerate(packets)
    ]
    write_replay_set(tmp_path / "s", tagged, {"split": "search"})
    frame, _ = load_replay_set(tmp_path / "s")
    assert list(frame.columns[: len(CASE_COLUMNS)]) == list(CASE_COLUMNS)
    assert frame["customer_tier"].tolist() == ["tier0", "tier1", "tier2"]
