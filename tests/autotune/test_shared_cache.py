"""`--cache PATH` keeps paid results outside the study: a new `--out` folder pays nothing for
calls another study already made, and without it each study has its own cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from contextos_lab.cli.app import main
from contextos_lab.harness.result_cache import CACHE_ENV, NO_CACHE_ENV
from tests.autotune.conftest import toy_spec_dict


def _paid_calls(out: Path) -> int:
    return int(json.loads((out / "front.json").read_text())["spend"]["calls"])


def _search(spec: Path, out: Path, *extra: str) -> int:
    return main(["search", str(spec), "--out", str(out), "--n-trials", "5", "--fidelity", "full",
                 "--no-progress", *extra])  # fmt: skip


def test_a_shared_cache_pays_once_across_out_folders(
    case_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "")  # restored after the test (the flag sets it)
    monkeypatch.setenv(NO_CACHE_ENV, "")
    spec = case_dir / "run.yaml"
    spec.write_text(yaml.safe_dump(toy_spec_dict()))
    shared = case_dir / "shared" / "cache.db"
    assert _search(spec, case_dir / "a", "--cache", str(shared)) == 0
    first = _paid_calls(case_dir / "a")
    assert first > 0 and shared.is_file()
    assert _search(spec, case_dir / "b", "--cache", str(shared)) == 0
    assert _paid_calls(case_dir / "b") == 0  # same trials, every call already paid
    monkeypatch.setenv(CACHE_ENV, "")
    assert _search(spec, case_dir / "c") == 0
    assert _paid_calls(case_dir / "c") == first  # its own cache: pays again
