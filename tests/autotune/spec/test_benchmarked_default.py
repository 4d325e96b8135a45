"""The spec's search defaults are the setting the committed search benchmarks measured (issue 33):
a user who sets no `sampler:`, `fidelity:` or `racing:` gets the racing share nobody has to
guess. Changing a default without re-running `benchmarks/search_cost.py` fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.spec.fidelity import RacingSchedule
from contextos_lab.autotune.spec.run_spec import TuningRunSpec

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"


def _default_run(result: dict) -> dict:
    runs = {f"{r['name']}/{r['fidelity']}": r for r in result["runs"]}
    return runs["kit_default/racing"]


@pytest.mark.parametrize("name", ["search_cost.json"])
def test_search_cost_measured_the_spec_defaults(name: str) -> None:
    result = json.loads((RESULTS / name).read_text())
    assert result["racing"] == RacingSchedule().model_dump(mode="json")
    assert TuningRunSpec.model_fields["fidelity"].default == "racing"
    default = _default_run(result)
    assert SamplerConfig(**default["sampler"]) == SamplerConfig(seed=0)
    standin = result["slow_standin_harness"]
    assert standin["racing"] == RacingSchedule().model_dump(mode="json")
