"""`project --check`: every file a project declares exists and reads; a missing or malformed
copy of any example project file is one line and exit 2, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CODING = EXAMPLES / "coding_agent"
#: Files a project may leave out (defaults apply); every other file is declared by another.
OPTIONAL = {"contextos-project.yaml", "harness/compilers.yaml", "harness/tunable-surfaces.json"}
BROKEN = {".json": "{not json", ".jsonl": '{"record": 1}\n{not json\n', ".yaml": "a: [b",
          ".py": "def replay(:\n"}  # fmt: skip


def _files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if (p.is_file() and p.suffix in BROKEN and "data" not in p.parts and p.parent != root)
        or p.name == "contextos-project.yaml"
    )


def _check(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["project", "--check", "--project", str(project)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("source", [CODING, BUNDLED_PROJECT], ids=["coding_agent", "refund"])
def test_the_examples_pass_the_check(source: Path, capsys) -> None:
    code, out, err = _check(source, capsys)
    assert code == 0, out + err
    assert "every declared file is present and reads" in out


@pytest.mark.parametrize("name", _files(CODING))
@pytest.mark.parametrize("how", ["missing", "malformed"])
def test_a_broken_project_file_is_one_line_and_exit_2(
    name: str, how: str, tmp_path: Path, capsys
) -> None:
    copy = tmp_path / "project"
    shutil.copytree(CODING, copy)
    target = copy / name
    if how == "missing":
        target.unlink()
    else:
        target.write_text(BROKEN[target.suffix], encoding="utf-8")
    code, out, err = _check(copy, capsys)
    if how == "missing" and name in OPTIONAL:
        assert code in (0, 2), out + err
    else:
        assert code == 2, (name, how, out, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert "Traceback" not in err


def test_a_bundle_named_by_decision_keys_must_exist(tmp_path: Path, capsys) -> None:
    copy = tmp_path / "project"
    shutil.copytree(CODING, copy)
    (copy / "harness/policy/bundles/POLICY_CODE_MERGE_V1.json").unlink()
    code, _, err = _check(copy, capsys)
    assert code == 2 and "decision_keys.code.change.merge.bundle names POLICY_CODE_MERGE_V1" in err
