"""`contextos-lab search` writes front.json, and refuses a bad spec with every problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from contextos_lab.cli.app import main
from tests.autotune.conftest import toy_spec_dict


def test_search_writes_front_json(case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = case_dir / "run.yaml"
    spec.write_text(yaml.safe_dump(toy_spec_dict()))
    out = case_dir / "out"
    code = main(["search", str(spec), "--out", str(out), "--n-trials", "12",
                 "--storage", f"journal:///{case_dir / 'j.log'}", "--no-progress"])  # fmt: skip
    assert code == 0
    front = json.loads((out / "front.json").read_text())
    assert front["trials"]["total"] == 12 and front["baseline_trial"] == 0
    assert front["candidates"] and front["front_floor_violations"] == []
    assert [c["rank"] for c in front["candidates"]] == list(range(1, len(front["candidates"]) + 1))
    assert 0.0 < front["hypervolume"]["value"] <= 1.0
    assert "on the front" in capsys.readouterr().out


def test_search_refuses_spec_listing_all_problems(
    case_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = toy_spec_dict()
    del raw["rollback_target"], raw["guardrails"]["floors"]["safety"]
    spec = case_dir / "bad.yaml"
    spec.write_text(yaml.safe_dump(raw))
    assert main(["search", str(spec), "--out", str(case_dir / "out")]) == 2
    err = capsys.readouterr().err
    assert "2 problem(s)" in err
    assert "rollback_target: missing" in err and "guardrails.floors.safety: missing" in err
    assert not (case_dir / "out" / "front.json").exists()
