"""What a scheduler and a researcher rely on before any cell runs: every parameter listed by
`papermill --help-notebook` with a type and a help text, one path rule (repository root) for
notebooks, papermill and the CLI, and one line, not a traceback, for a missing input."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from contextos_lab.errors import MissingPrerequisite
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.study_front import StudyNotFound
from contextos_lab.reports import notebook_inputs as inputs

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _parameters_cell(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_lists_every_parameter_with_type_and_help(path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    source = _parameters_cell(path)
    tree = ast.parse(source)
    assigned = [n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)]
    assert not [n for n in tree.body if isinstance(n, ast.Assign)], "unannotated assignment"
    for node in tree.body:  # plain values only: what papermill can print and override
        if isinstance(node, ast.AnnAssign):
            ast.literal_eval(node.value)
    listed = papermill.inspect_notebook(str(path))
    assert list(listed) == assigned
    for name, p in listed.items():
        assert p["inferred_type_name"] not in ("None", ""), f"{name} untyped"
        assert p["help"], f"{name} has no help"


def test_scheduled_sweep_sees_the_storage_parameter() -> None:
    papermill = pytest.importorskip("papermill")
    listed = papermill.inspect_notebook(str(REPO / "notebooks" / "02_autotune_sweep.ipynb"))
    assert "postgresql" in listed["storage"]["help"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_states_prerequisites(path: Path) -> None:
    first = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    assert first["cell_type"] == "markdown" and "Prerequisites:" in "".join(first["source"])


def test_paths_resolve_against_the_repository_root_from_any_kernel_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ledger.LEDGER_ENV, raising=False)
    monkeypatch.chdir(REPO / "notebooks")  # where JupyterLab starts kernels
    assert inputs.repo_root() == REPO
    assert inputs.resolve("specs/x.yaml") == REPO / "specs" / "x.yaml"
    assert inputs.resolve("/abs/x") == Path("/abs/x")
    assert inputs.store_url("sqlite:///.contextos/s.db") == f"sqlite:///{REPO}/.contextos/s.db"
    assert inputs.store_url("postgresql://u@h/db") == "postgresql://u@h/db"
    from_notebook = inputs.ledger_path(None)
    monkeypatch.chdir(REPO)  # where the CLI is run
    assert from_notebook == ledger.resolve_ledger() == inputs.ledger_path(None)


def test_a_missing_input_is_one_line_naming_it_and_what_to_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO / "notebooks")
    with pytest.raises(MissingPrerequisite) as exc:
        inputs.require("no/such/spec.yaml", "run spec", "set `spec_path`")
    shown = exc.value._render_traceback_()
    assert shown == [
        f"MissingPrerequisite: no run spec at {REPO}/no/such/spec.yaml: set `spec_path`"
    ]
    with pytest.raises(MissingPrerequisite, match="trace source"):
        inputs.resolve_sources(["synthetic:5", "no/such/traces.json"])
    assert inputs.resolve_sources("synthetic:5") == ["synthetic:5"]


def test_gate_without_a_study_says_what_to_run_and_writes_nothing(tmp_path: Path) -> None:
    from contextos_lab.gate.run_gate import run_gate
    from tests.gate.gate_toy import write_project

    spec = write_project(tmp_path / "p", n=20)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(StudyNotFound) as exc:
        run_gate(spec, out_dir=out, ledger_file=tmp_path / "l.jsonl")
    (line,) = exc.value._render_traceback_()
    assert f"no study at {out}" in line and "run notebook 02 or `contextos-lab search" in line
    assert list(out.iterdir()) == []  # no study.db, no result cache made by looking
