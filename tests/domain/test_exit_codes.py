"""User errors on a project's loop exit 2 with one line (README's table), never 1 or a
traceback: an unknown id, a class with no compiler row, a missing layer replayer or bundle."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from contextos_lab.cli.app import main

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    copy = tmp_path / "desk"
    shutil.copytree(CODING, copy)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(copy / "data/authorised_overriders.json"))
    common = ["--store", f"sqlite:///{tmp_path}/s.db", "--project", str(copy)]

    def run(*argv: str, code: int = 0) -> str:
        got = main([*argv, *common])
        out, err = capsys.readouterr()
        assert got == code, f"{argv}: {got}\n{out}\n{err}"
        if code == 2:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error"), err
        return err

    def ingest() -> None:
        run("ingest", "decisions", str(copy / "data/decisions.jsonl"))
        run("ingest", "feedback", str(copy / "data/feedback.jsonl"))
        run("cluster")

    return copy, run, ingest


def test_unknown_ids_exit_2(desk) -> None:
    _, run, ingest = desk
    ingest()
    for argv in (
        ("replay", "sp_2026_01_01_missing"),
        ("propose", "--insight", "ins_2026_01_01_missing"),
        ("lineage", "str_2026_01_01_missing"),
        ("store", "lineage", "str_2026_01_01_missing"),
        ("release", "sp_2026_01_01_missing", "--approver", "cc_board"),
    ):
        run(*argv, code=2)


def test_a_reason_class_with_no_compiler_row_exits_2(desk) -> None:
    copy, run, ingest = desk
    table = yaml.safe_load((copy / "harness/compilers.yaml").read_text())
    del table["compilers"]["merged_without_tests"]
    (copy / "harness/compilers.yaml").write_text(yaml.safe_dump(table))
    ingest()
    err = run("propose", "--reason-class", "merged_without_tests", code=2)
    assert "compilers.yaml" in err


def test_a_missing_layer_replayer_exits_2(desk) -> None:
    copy, run, ingest = desk
    ingest()
    (copy / "harness/layer_replay.py").unlink()
    run("propose", "--reason-class", "runaway_loop")
    rule = re.search(r"(str_\w+)", run("propose", "--reason-class", "runaway_loop")).group(1)
    err = run("replay", rule, code=2)
    assert "layer_replay.py" in err


def test_a_missing_bundle_file_exits_2(desk) -> None:
    copy, run, ingest = desk
    ingest()
    (copy / "harness/policy/bundles/POLICY_CODE_MERGE_V1.json").unlink()
    err = run("propose", "--reason-class", "merged_without_tests", code=2)
    assert "POLICY_CODE_MERGE_V1.json" in err and "decision_keys" in err
