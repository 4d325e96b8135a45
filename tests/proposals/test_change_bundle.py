"""Gate emissions into the store, and the change-control bundle with underpowered candidates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from contextos_lab.cli.app import main
from contextos_lab.gate.run_gate import GATE_FILE
from contextos_lab.proposals.files.change_bundle import write_bundle
from contextos_lab.proposals.files.emit import emit
from contextos_lab.proposals.files.emitted_store import store_emitted
from contextos_lab.schemas.tuning import TuningProposal
from contextos_lab.store import ExperienceStore
from tests.proposals.test_emit import _frames, gate_run


def test_bundle_lists_promoted_and_marks_underpowered(tmp_path: Path, capsys) -> None:
    report = tmp_path / "reports" / "eval_2026_05_04_a01" / "03_heldout_gate.html"
    report.parent.mkdir(parents=True)
    report.write_text("<html>the gate report</html>")
    base, cands = _frames()
    rng = np.random.default_rng(2)
    noisy = base.assign(economics=base["economics"] + rng.normal(-0.0001, 0.01, len(base)))
    run = gate_run({"trial_1": cands["trial_1"], "trial_4": noisy})
    verdicts = {d.candidate_id: d.verdict for d in run.decisions}
    assert verdicts == {"trial_1": "promote", "trial_4": "underpowered"}
    out = tmp_path / "gate"
    (out).mkdir()
    (out / GATE_FILE).write_text(run.model_dump_json())
    result = emit(run, report, out)
    store = ExperienceStore(f"sqlite:///{tmp_path}/s.db")
    stored, refused = store_emitted(result, store)
    assert (
        refused == [] and len(stored) == 1 and store.list(TuningProposal)[0].artifact_id in stored
    )

    manifest = write_bundle(store, tmp_path / "cc", gate_dir=out)
    by_kind = {e["kind"]: e for e in manifest["entries"]}
    promoted, under = by_kind["tuning_proposal"], by_kind["review_candidate"]
    assert promoted["marked"] == "promoted" and promoted["gate_report_sha256"]
    assert under["marked"].startswith("underpowered") and under["id"].endswith("trial_4")
    needed = next(d.required_n for d in run.decisions if d.candidate_id == "trial_4")
    assert under["sample_size_needed"] == needed
    on_disk = json.loads((tmp_path / "cc" / "manifest.json").read_text())
    assert on_disk["counts"] == {"tuning_proposal": 1, "review_candidate": 1}
    assert (tmp_path / "cc" / promoted["file"]).is_file()
    # the command names each review candidate (by the entry's kind) with the n it needs
    cli = ["bundle", "--out", str(tmp_path / "cc2"), "--gate", str(out), "--store", store.url]
    assert main(cli) == 0
    shown = capsys.readouterr().out
    assert f"review candidate {under['id']}: underpowered, needs n={needed}" in shown
