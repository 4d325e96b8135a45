"""A domain's own scripts build goldens, bundles and replay cases from `contextos_lab.api`
(issue 40): stable names whatever moves inside; the pre-relayout paths still import, warning."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

from contextos_lab import api
from contextos_lab.domain.loader import BUNDLED_PROJECT


def test_every_builder_resolves_to_what_its_module_defines() -> None:
    for name, target in api.BUILDERS.items():
        module, _, attribute = target.partition(":")
        assert getattr(api, name) is getattr(importlib.import_module(module), attribute or name)
        assert name in dir(api)
    assert not set(api.BUILDERS) & set(api.RESEARCH)  # one meaning per name


def test_a_generator_script_builds_goldens_and_a_replay_set(tmp_path: Path) -> None:
    from contextos_lab.api import (
        DecisionRecord,
        ExpectedOutcome,
        GoldenCase,
        PolicyBundle,
        ReplayPacket,
        dump_goldens,
        evaluate_policy,
        load_goldens,
        read_packets,
        write_replay_set,
    )

    harness = BUNDLED_PROJECT / "harness"
    golden = load_goldens(harness / "goldens" / "POLICY_RETURNS_V4.jsonl")[0]
    bundle = PolicyBundle.model_validate_json(
        (harness / "policy" / "bundles" / "POLICY_RETURNS_V4.json").read_text()
    )
    record = DecisionRecord.model_validate(golden.record.model_dump())
    decided = evaluate_policy(bundle, record)
    made = GoldenCase(record=record, expected_post_patch_outcome=ExpectedOutcome(decision="deny"))
    dump_goldens([made], tmp_path / "g.jsonl")
    assert load_goldens(tmp_path / "g.jsonl") == [made] and decided.decision
    packets = read_packets(harness / "replay")[:3]
    assert all(isinstance(p, ReplayPacket) for p in packets)
    write_replay_set(tmp_path / "replay", packets, {"name": "mine"})
    assert read_packets(tmp_path / "replay") == packets


@pytest.mark.parametrize(
    ("old", "name"),
    [
        ("contextos_lab.proposals.goldens", "GoldenCase"),
        ("contextos_lab.proposals.policy_bundle", "PolicyBundle"),
        ("contextos_lab.proposals.replay", "run_replay_gate"),
    ],
)
def test_the_paths_before_the_relayout_still_import_with_a_warning(old: str, name: str) -> None:
    import sys

    if old != "contextos_lab.proposals.replay":  # a shim warns when it is imported
        sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
        value = getattr(module, name)
    assert value is getattr(api, name)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught), old
