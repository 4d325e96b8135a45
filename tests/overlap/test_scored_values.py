"""Near copies are near in what is scored: structured records that differ in a number, a flag
or an enum are distinct cases; their import makes a split `search` runs on; copies of them in
every near-copy shape are still refused, and `cases import` keeps a near copy on one side."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.autotune.cases import case_set_from_frame, overlap, overlap_details
from contextos_lab.autotune.spec.check import default_set_checker
from contextos_lab.cli.app import main
from contextos_lab.harness.case_format import SimpleCase, case_row, convert
from tests.autotune.conftest import toy_spec_dict
from tests.overlap.near_copy_shapes import near_copy, shape_names
from tests.overlap.structured_cases import REQUEST, structured_cases


def _rows(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [case_row(SimpleCase.model_validate(c), i) for i, c in enumerate(cases)]


def _set(rows: list[dict[str, Any]]) -> Any:
    return case_set_from_frame(pd.DataFrame(rows))


def _write(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_records_differing_in_a_scored_field_are_distinct(seed: int) -> None:
    rows = _rows(structured_cases(120, seed))
    assert overlap_details(_set(rows[::2]), _set(rows[1::2])) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(shape_names()), seed=st.integers(0, 10**6))
def test_near_copies_of_structured_cases_are_still_refused(shape: str, seed: int) -> None:
    rows = _rows(structured_cases(60, 7))
    rng = random.Random(seed)
    original = rng.choice(rows[::2])
    copied = near_copy(rng, original, shape)
    shared = overlap(_set(rows[::2]), _set([*rows[1::2], copied]))
    assert shared == [f"{original['case_id']}={copied['case_id']}"]


def test_imported_structured_set_runs_search(tmp_path: Path) -> None:
    """The access desk's shape: `cases import` then `search` on that very split (exit 7 before:
    one-field variants were "near (Jaccard 0.95)")."""
    cases = structured_cases(80, 3)
    for case in cases:  # the toy harness reads these two, derived so variants stay one apart
        v = case["vars"]
        v.update(difficulty=round(v["training_age_days"] / 730, 3), risky=v["has_ticket"])
    src = _write(tmp_path / "cases.jsonl", cases)
    assert main(["cases", "import", str(src), "--out", str(tmp_path / "sets")]) == 0
    spec = tmp_path / "run.yaml"
    raw = toy_spec_dict(search_set="sets/search.jsonl", heldout_test_set="sets/heldout.jsonl")
    spec.write_text(yaml.safe_dump(raw))
    args = ["search", str(spec), "--out", str(tmp_path / "out"), "--n-trials", "2"]
    assert main([*args, "--storage", f"journal:///{tmp_path / 'j.log'}", "--no-progress"]) == 0


def test_import_keeps_a_near_copy_on_the_search_side(tmp_path: Path) -> None:
    """Free text one word apart is a near copy: the import never splits the pair, so the spec
    check passes the split it wrote (it named the pair before)."""
    rng = random.Random(5)
    cases = []
    for i in range(40):
        words = REQUEST.split()
        rng.shuffle(words)
        text = " ".join(words)
        cases.append({"id": f"t{i:02d}a", "vars": {"note": text}})
        edited = text.split()
        edited[rng.randrange(len(edited))] = "kindly"
        cases.append({"id": f"t{i:02d}b", "vars": {"note": " ".join(edited)}})
    done = convert(_write(tmp_path / "c.jsonl", cases), tmp_path / "sets", heldout_share=0.5)
    assert done.moved and all(m[:3] == k[:3] for m, k in done.moved)
    assert default_set_checker(done.search, done.heldout) == []
