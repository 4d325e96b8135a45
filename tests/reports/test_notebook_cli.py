"""Notebook 03 under papermill, HTML rendering, and the `sweep` / `gate` commands' exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from contextos_lab.cli.app import main
from contextos_lab.proposals.files.emit import report_matches, sha256_file
from tests.gate.conftest import study_for
from tests.gate.gate_toy import write_project
from tests.reports.html_checks import check_reviewer_html

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "03_heldout_gate.ipynb"


def test_notebook_03_is_committed_clean() -> None:
    nb = json.loads(NOTEBOOK.read_text())
    tags = [c["metadata"].get("tags", []) for c in nb["cells"]]
    assert any("parameters" in t for t in tags)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell["outputs"] and cell["execution_count"] is None
            assert "def " not in "".join(cell["source"])


@pytest.mark.notebook
def test_notebook_03_renders_report_with_gate_table(tmp_path: Path) -> None:
    from contextos_lab.reports.render import run_report

    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=8)
    out = tmp_path / "out"
    url = study_for(spec, out)
    rendered = run_report(
        "03_heldout_gate",
        {"storage": url, "spec_path": str(spec), "out_dir": str(out), "run_id": "eval_t1",
         "ledger": str(tmp_path / "l.jsonl"), "n_boot": 200},
        out,
        "eval_t1",
    )  # fmt: skip
    assert rendered.html == out / "reports" / "eval_t1" / "03_heldout_gate.html"
    assert rendered.sha256 == sha256_file(rendered.html)
    html = check_reviewer_html(rendered.html, min_images=1)  # the paired-differences figure
    for text in ("read 0 time(s) before this run", "p_holm", "promote", "Holm p", "e-"):
        assert text in html
    assert "what changes" in html and "→" in html  # changes as from → to, not dict reprs
    # the executed notebook beside it keeps the code for researchers
    executed = json.loads(rendered.notebook.read_text())
    assert any("run_gate(" in "".join(c["source"]) for c in executed["cells"])
    assert json.loads((out / "gate.json").read_text())["run_id"] == "eval_t1"


@pytest.mark.notebook
def test_sweep_cli_end_to_end_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=8)
    out = tmp_path / "out"
    ledger = str(tmp_path / "l.jsonl")
    code = main(["sweep", str(spec), "--out", str(out), "--ledger", ledger])
    printed = capsys.readouterr().out
    assert code == 0, printed
    proposals = sorted((out / "proposals").glob("at_*.json"))
    assert proposals and all(report_matches(p) for p in proposals)
    run_dir = next((out / "reports").iterdir())
    assert {p.name for p in run_dir.iterdir()} >= {
        "02_autotune_sweep.html", "03_heldout_gate.html", "02_autotune_sweep.ipynb",
    }  # fmt: skip
    assert "1 TuningProposal file with" in printed
    assert len(proposals) == 1  # one decision per sweep: the promoted points are one proposal
    check_reviewer_html(run_dir / "02_autotune_sweep.html", min_images=2)
    check_reviewer_html(run_dir / "03_heldout_gate.html", min_images=1)

    # the gate alone on the same, unchanged study: it says so and reads and writes nothing
    # (issue 29: a re-run must not spend another held-out read or write a second proposal)
    gate_json = (out / "gate.json").read_text()
    code = main(["gate", "--spec", str(spec), "--out", str(out), "--ledger", ledger])
    printed = capsys.readouterr().out
    assert code == 0
    assert "already gated" in printed
    assert (out / "gate.json").read_text() == gate_json
    assert json.loads(gate_json)["prior_heldout_reads"] == 0
    assert sorted((out / "proposals").glob("at_*.json")) == proposals


def test_sweep_cli_refuses_bad_spec_and_unreachable_storage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"name": "x", "target": {"metric": "policy"}}))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "refused" in capsys.readouterr().err
    spec = write_project(tmp_path / "p")
    url = f"sqlite:///{tmp_path}/no/such/dir/study.db"
    # a folder that does not exist is the user's to fix (2); a silent server is exit 3
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--storage", url]) == 2
    assert "cannot open study storage" in capsys.readouterr().err


@pytest.mark.notebook
def test_failed_gate_notebook_keeps_partial_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from contextos_lab.cli.gate import EXIT_NO_STUDY, JobError, gate_and_emit

    spec = write_project(tmp_path / "p")
    out = tmp_path / "out"
    url = study_for(spec, out, n_trials=4)
    # the CLI refuses a study the storage lacks before any kernel starts (one line, exit 2) ...
    code = main(
        ["gate", "--study", "no_such_study", "--spec", str(spec), "--out", str(out),
         "--ledger", str(tmp_path / "l.jsonl")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no_such_study" in err
    assert not (out / "reports").exists()
    # ... while a notebook that fails anyway (here: the same study, past the CLI's check)
    # keeps its partial executed copy and says where
    with pytest.raises(JobError) as exc:
        gate_and_emit(
            spec_path=spec, out=out, storage=url, run_id="eval_partial1",
            study="no_such_study", ledger=str(tmp_path / "l.jsonl"),
        )  # fmt: skip
    assert exc.value.code == EXIT_NO_STUDY
    assert "StudyNotFound" in str(exc.value)
    assert "partial executed notebook kept at" in str(exc.value)
    partial = next((out / "reports").glob("*/03_heldout_gate.ipynb"))
    nb = json.loads(partial.read_text())
    assert any(o.get("output_type") == "error" for c in nb["cells"] for o in c.get("outputs", []))
    assert not (out / "proposals").exists()
