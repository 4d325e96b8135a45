"""A gate re-run on an unchanged study reads nothing, writes nothing and says so."""

from __future__ import annotations

from pathlib import Path

from contextos_lab.cli.app import main
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.rerun import unchanged_since
from contextos_lab.gate.run_gate import run_gate
from tests.gate.conftest import study_for
from tests.gate.gate_toy import write_project


def test_a_rerun_on_an_unchanged_study_is_refused_before_any_read(
    tmp_path: Path, ledger_file: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    out = tmp_path / "out"
    url = study_for(spec, out)
    first = run_gate(spec, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=300)
    reads = len(ledger.reads(ledger_file))
    assert reads == 1
    earlier = unchanged_since(spec, url, out)
    assert earlier is not None and earlier.run_id == first.run.run_id
    before = sorted(p.name for p in out.rglob("*"))
    code = main(["gate", "--spec", str(spec), "--out", str(out), "--storage", url,
                 "--ledger", str(ledger_file), "--no-progress"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "already gated" in captured.out and first.run.run_id in captured.out
    assert len(ledger.reads(ledger_file)) == reads  # the held-out set was not read again
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing new written


def test_a_changed_spec_is_gated_again(tmp_path: Path, ledger_file: Path) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    out = tmp_path / "out"
    url = study_for(spec, out)
    run_gate(spec, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=300)
    other = write_project(tmp_path / "q", tunable_surfaces=["top_k"], n_trials=12)
    assert unchanged_since(other, url, out) is None
