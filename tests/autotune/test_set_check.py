"""The pre-run overlap check of a held-out folder whose cases are withheld (a manifest only)
compares the manifest's hashes; with cases it applies the gate's rule (tests/overlap)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from contextos_lab.autotune.spec.check import default_set_checker

ROOT = Path(__file__).resolve().parents[2]


def _manifest_only(src: Path, dest: Path, extra: dict[str, str] | None = None) -> Path:
    dest.mkdir()
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["cases"].update(extra or {})
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def test_disjoint_sets_pass_without_reading_heldout_cases(tmp_path: Path) -> None:
    heldout = _manifest_only(ROOT / "heldout", tmp_path / "heldout")
    assert not (heldout / "cases.jsonl").exists()
    assert default_set_checker(ROOT / "search_sets", heldout) == []


def test_overlap_named_from_the_manifest(tmp_path: Path) -> None:
    search_manifest = json.loads((ROOT / "search_sets" / "manifest.json").read_text())
    leaked_id, leaked_hash = next(iter(search_manifest["cases"].items()))
    search = tmp_path / "search"
    shutil.copytree(ROOT / "search_sets", search)
    heldout = _manifest_only(ROOT / "heldout", tmp_path / "heldout", {"renamed_case": leaked_hash})
    [problem] = default_set_checker(search, heldout)
    assert "share 1 case(s)" in problem and leaked_id in problem
