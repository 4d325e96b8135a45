"""The run spec refuses to start with every problem listed at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from contextos_lab.autotune.context import prepare
from contextos_lab.autotune.spec.check import check_spec
from contextos_lab.autotune.spec.load import SpecError, load_spec, parse_spec
from tests.autotune.conftest import toy_spec_dict


def test_valid_spec_loads_from_yaml_and_json(case_dir: Path) -> None:
    raw = toy_spec_dict()
    (case_dir / "run.yaml").write_text(yaml.safe_dump(raw))
    (case_dir / "run.json").write_text(json.dumps(raw))
    a, b = load_spec(case_dir / "run.yaml"), load_spec(case_dir / "run.json")
    assert a.model_dump() == b.model_dump()
    assert a.resolve(a.search_set) == (case_dir / "search.jsonl").resolve()
    ctx = prepare(a)
    assert ctx.space.names == ("top_k", "max_hops", "approval_threshold", "budget")
    assert len(ctx.search) == 12
    assert a.tuning_target().guardrails == ("policy>=0.99", "safety>=1.0", "utility>=baseline-0.5")


def test_missing_fields_all_listed(case_dir: Path) -> None:
    raw = toy_spec_dict()
    for key in ("target", "baseline_tuple", "rollback_target", "heldout_test_set"):
        del raw[key]
    del raw["guardrails"]["accepted_deltas"]["latency"]
    with pytest.raises(SpecError) as err:
        parse_spec(raw, case_dir)
    text = str(err.value)
    for where in ("target", "baseline_tuple", "rollback_target", "heldout_test_set",
                  "guardrails.accepted_deltas.latency"):  # fmt: skip
        assert f"{where}: missing required field" in text
    assert len(err.value.problems) == 5


def test_inconsistent_spec_lists_harness_and_set_problems_together(case_dir: Path) -> None:
    # overlapping sets: held-out shares two cases with the search set
    search = (case_dir / "search.jsonl").read_text().splitlines()
    (case_dir / "leaky.jsonl").write_text("\n".join(search[:2]) + "\n")
    raw = toy_spec_dict(
        heldout_test_set="leaky.jsonl",
        target={"intent": "support.refund", "metric": "economics", "direction": "increase"},
        tunable_surfaces=[
            "top_k",
            "warp_drive",
            {"name": "max_hops", "baseline": 7},
            {"name": "approval_threshold", "low": 0.1},
        ],
    )
    with pytest.raises(SpecError) as err:
        check_spec(raw, base_dir=case_dir)
    problems = err.value.problems
    text = "\n".join(problems)
    assert "direction 'increase' contradicts metric 'economics'" in text
    assert "unknown surface 'warp_drive'" in text
    assert "max_hops: baseline override 7 is outside the harness domain" in text
    assert "approval_threshold: low=0.1 is outside the harness range" in text
    assert "share 2 case(s)" in text
    assert len(problems) == 5


def test_floor_as_objective_and_missing_reference_point_refused(case_dir: Path) -> None:
    raw = toy_spec_dict(
        objectives=["utility", "safety", "latency"],
        hypervolume={"reference_point": {"utility": 0.0}},
    )
    with pytest.raises(SpecError) as err:
        parse_spec(raw, case_dir)
    text = str(err.value)
    assert "are floors" in text
    assert "target.metric 'economics' is not among objectives" in text
    assert "missing objective 'latency'" in text


def test_unreachable_harness_is_a_listed_problem(case_dir: Path) -> None:
    raw = toy_spec_dict(harness="no_such_package.mod:factory", rollback_target="")
    with pytest.raises(SpecError) as err:
        check_spec(raw, base_dir=case_dir)
    text = str(err.value)
    assert "harness: unreachable" in text and "rollback_target" in text


def test_a_spec_file_s_field_problems_name_their_lines(case_dir: Path) -> None:
    """Field problems named the field only; a long spec needs the line too."""
    import yaml

    from contextos_lab.autotune.spec.load import load_spec

    spec = toy_spec_dict(n_trials="many")
    spec["tiers"] = {"screen": {"prices": {"usd_per_1m_input": -1}}, "target": {"bogus": 1}}
    del spec["rollback_target"]
    text = yaml.safe_dump(spec, sort_keys=False, default_flow_style=False)
    path = case_dir / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()

    def line_of(prefix: str) -> int:
        return next(i for i, ln in enumerate(lines, 1) if ln.startswith(prefix))

    with pytest.raises(SpecError) as err:
        load_spec(path)
    problems = err.value.problems
    assert f"line {line_of('n_trials:')}: n_trials: Input should be a valid integer" in "\n".join(
        problems
    )
    price = f"line {line_of('      usd_per_1m_input:')}: tiers.screen.prices.usd_per_1m_input:"
    assert any(p.startswith(price) for p in problems)
    assert f"line {line_of('    bogus:')}: tiers.target.bogus:" in "\n".join(problems)
    # a missing field has no line of its own and no declared parent: left as it was
    assert "rollback_target: missing required field" in problems
