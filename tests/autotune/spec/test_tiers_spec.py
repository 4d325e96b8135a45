"""Spec `tiers` (issue 46): declared screen and target tiers, parsed and checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.autotune.context import prepare
from contextos_lab.autotune.spec.load import SpecError, parse_spec
from contextos_lab.autotune.spec.tiers import Tiers
from tests.autotune.conftest import toy_spec_dict

CHEAP = {"usd_per_1m_input": 0.1}


def test_a_spec_without_tiers_has_none(case_dir: Path) -> None:
    spec = parse_spec(toy_spec_dict(), case_dir)
    assert spec.tiers is None and spec.screen_tier() is None
    assert prepare(spec).screen is None


def test_screen_on_the_same_harness_merges_kwargs_and_takes_its_price(case_dir: Path) -> None:
    spec = parse_spec(
        toy_spec_dict(
            harness_kwargs={"delay": 0.0},
            prices={"usd_per_1m_input": 1.0},
            tiers={"screen": {"harness_kwargs": {"invert": True}, "prices": CHEAP}},
        ),
        case_dir,
    )
    harness, kwargs, prices = spec.screen_tier()  # type: ignore[misc]
    assert harness == spec.harness and kwargs == {"delay": 0.0, "invert": True}
    assert prices is not None and prices.usd_per_1m_input == 0.1
    ctx = prepare(spec)
    assert ctx.screen is not None and ctx.screen.harness.invert is True  # type: ignore[attr-defined]
    assert ctx.screen.meter is ctx.meter  # one budget sees both tiers
    # the result cache keys the screen apart from the target (same name, another version)
    assert ctx.screen.harness.name == ctx.harness.name
    assert "+tier:screen:" in ctx.screen.harness.version  # type: ignore[attr-defined]


def test_target_tier_replaces_the_spec_harness_fields(case_dir: Path) -> None:
    spec = parse_spec(
        toy_spec_dict(
            tiers={
                "screen": {"harness_kwargs": {"invert": True}},
                "target": {"harness_kwargs": {"delay": 0.0}, "prices": CHEAP},
            }
        ),
        case_dir,
    )
    assert spec.harness_kwargs == {"delay": 0.0}
    assert spec.prices is not None and spec.prices.usd_per_1m_input == 0.1


def test_the_same_tier_twice_is_refused_naming_the_field(case_dir: Path) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(toy_spec_dict(tiers={"screen": {}, "target": {}}), case_dir)
    assert "tiers" in str(err.value) and "same harness" in str(err.value)


def test_an_unknown_tier_field_is_refused(case_dir: Path) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(toy_spec_dict(tiers={"screen": {"harnes": "x:y"}}), case_dir)
    assert "harnes" in str(err.value)


def test_a_screen_harness_that_cannot_load_is_a_spec_error(case_dir: Path) -> None:
    spec = parse_spec(toy_spec_dict(tiers={"screen": {"harness": "no_such_mod:factory"}}), case_dir)
    with pytest.raises(SpecError) as err:
        prepare(spec)
    assert "tiers.screen" in str(err.value)


@pytest.mark.parametrize(("share", "n", "want"), [(0.2, 194, 39), (0.2, 10, 4), (50, 30, 30)])
def test_screen_cases(share: float, n: int, want: int) -> None:
    assert Tiers(screen={"harness_kwargs": {"a": 1}}, screen_cases=share).n_screen_cases(n) == want


def test_a_refusal_after_the_fields_names_the_spec_file(case_dir: Path) -> None:
    """It said "run spec refused" for a tier or harness that cannot load, naming no file."""
    import yaml

    from contextos_lab.autotune.spec.load import load_spec

    path = case_dir / "tiered.yaml"
    spec = toy_spec_dict(tiers={"screen": {"harness": "no_such_mod:factory"}})
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        prepare(load_spec(path))
    assert str(err.value).startswith(f"{path} refused") and "tiers.screen" in str(err.value)
    path.write_text(yaml.safe_dump({**spec, "tiers": None, "harness": "no_such_mod:f"}))
    with pytest.raises(SpecError, match=rf"^{path} refused .*\n  - harness: unreachable"):
        prepare(load_spec(path))
