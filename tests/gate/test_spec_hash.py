"""`spec_hash` is stable across versions: the spec as written, behaviour defaults, a version."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field, create_model

from contextos_lab.autotune.spec.load import parse_spec, read_spec_file
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.gate.run_gate import spec_hash

ROOT = Path(__file__).resolve().parents[2]
#: The hash of every bundled spec: a change here loses "already proposed" across an upgrade,
#: so it must come with a new SPEC_HASH_VERSION and a note in the changelog of the commit.
PINNED = {
    "specs/reference_floor_breach.yaml": (
        "79910c6b21e136f371ea57fef4bdacecbaea6209021a38f184a33010391c593b"
    ),
    "specs/reference_refund.yaml": (
        "3637468b4649db74c15108f82f6086e4721e6c5d29685b3ab4d0474ad71c1b5f"
    ),
}


def test_every_spec_in_specs_is_pinned() -> None:
    assert {f"specs/{p.name}" for p in (ROOT / "specs").glob("*.yaml")} == set(PINNED)


def _spec(rel: str) -> TuningRunSpec:
    return parse_spec(read_spec_file(ROOT / rel))


@pytest.mark.parametrize("rel", sorted(PINNED))
def test_every_bundled_spec_hash_is_pinned(rel: str) -> None:
    assert spec_hash(_spec(rel)) == PINNED[rel]


def test_a_new_field_with_a_default_leaves_the_hash_alone() -> None:
    spec = _spec("specs/reference_refund.yaml")
    later_model = create_model("Later", __base__=TuningRunSpec, new_knob=(int, Field(default=3)))
    later = later_model.model_validate(spec.model_dump())
    assert spec_hash(later) == spec_hash(spec)


def test_a_written_default_hashes_as_the_default_and_a_changed_value_does_not() -> None:
    spec = _spec("specs/reference_refund.yaml")
    every_field_written = TuningRunSpec.model_validate(spec.model_dump())
    assert spec_hash(every_field_written) == spec_hash(spec)
    for change in ({"repeats": 3}, {"n_trials": 7}, {"gain_tolerance": 0.01}):
        assert spec_hash(TuningRunSpec.model_validate(spec.model_dump() | change)) != spec_hash(
            spec
        ), change
