"""Near copies of a search case under new ids are refused by the spec check and the gate alike,
naming both ids; the bundled disjoint sets pass."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.autotune.cases import case_set_from_frame, overlap, overlap_details
from contextos_lab.autotune.spec.check import default_set_checker
from contextos_lab.autotune.spec.load import OverlapProblem, SpecError
from contextos_lab.overlap.normalise import normalised_key
from tests.overlap.near_copy_shapes import ROOT, bundled_cases, near_copy, shape_names

SEARCH = bundled_cases("search_sets")[:60]
FRESH = bundled_cases("heldout")[:20]


def _set(rows: list[dict]) -> object:
    return case_set_from_frame(pd.DataFrame(rows))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(shape_names()),
    index=st.integers(0, len(SEARCH) - 1),
    seed=st.integers(0, 10**6),
)
def test_every_near_copy_shape_is_refused_naming_both_ids(
    shape: str, index: int, seed: int
) -> None:
    original = SEARCH[index]
    copied = near_copy(random.Random(seed), original, shape)
    assert copied["case_id"] != original["case_id"]
    shared = overlap(_set(SEARCH), _set([*FRESH, copied]))
    assert f"{original['case_id']}={copied['case_id']}" in shared


def test_normalised_forms_agree_for_exact_shapes() -> None:
    rng = random.Random(0)
    row = SEARCH[3]
    for shape in (
        "zero_width_space",
        "cyrillic_lookalike",
        "full_width",
        "whitespace",
        "case",
        "reordered_entities",
        "stale_content_hash",
        "numbers_retyped",
    ):
        assert normalised_key(near_copy(rng, row, shape)) == normalised_key(row), shape


def test_the_bundled_sets_share_nothing() -> None:
    search = _set(bundled_cases("search_sets"))
    heldout = _set(bundled_cases("heldout"))
    assert overlap_details(search, heldout) == []


def test_distinct_cases_from_one_template_are_not_copies() -> None:
    heldout = [dict(row, case_id=f"h-{i}", packet_id=f"h-{i}") for i, row in enumerate(FRESH)]
    assert overlap(_set(SEARCH), _set(heldout)) == []


def _write(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir()
    path = folder / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    "shape", ["zero_width_space", "extra_forbidden_string", "reordered_entities"]
)
def test_the_spec_check_refuses_what_the_gate_refuses_with_exit_7(
    tmp_path: Path, shape: str
) -> None:
    search = _write(tmp_path / "search", SEARCH)
    copied = near_copy(random.Random(1), SEARCH[5], shape)
    heldout = _write(tmp_path / "heldout", [*FRESH, copied])
    [problem] = default_set_checker(search, heldout)
    assert isinstance(problem, OverlapProblem)
    assert f"{SEARCH[5]['packet_id']}={copied['packet_id']}" in problem
    assert SpecError([problem]).code == 7 and SpecError(["bad field"]).code == 2


def test_bundled_folders_pass_the_spec_check() -> None:
    assert default_set_checker(ROOT / "search_sets", ROOT / "heldout") == []


def test_search_refuses_a_near_copy_before_any_trial_with_exit_7(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31's bullet: the gate's overlap rule runs at spec time, so nothing is paid."""
    from contextos_lab.cli.app import main
    from tests.gate.gate_toy import write_project

    spec = write_project(tmp_path / "p")
    search = pd.read_json(tmp_path / "p" / "search.jsonl", lines=True)
    leaked = search.iloc[[4]].assign(case_id="h-new-id")  # the same case under a new id
    with (tmp_path / "p" / "heldout.jsonl").open("a") as fh:
        fh.write(leaked.to_json(orient="records", lines=True))
    out = tmp_path / "out"
    assert main(["search", str(spec), "--out", str(out), "--no-progress"]) == 7
    err = capsys.readouterr().err
    assert "s0004=h-new-id" in err
    assert not (out / "study.db").exists() and not (out / "front.json").exists()
