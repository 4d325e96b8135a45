"""A gate asked the same question again answers from its record: nothing read, spent or
written, and the same per-case scores (hence the same tables and figures); any changed input
(settings, held-out set, harness version, the caller's run id) is gated again."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis.extra.pandas import column, data_frames, range_indexes

from contextos_lab.autotune.context import prepare
from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.gate.gate_record import GateResult
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.reuse import CASES_FILE, reusable, scores_frame, scores_json
from contextos_lab.gate.run_gate import run_gate
from tests.gate.conftest import study_for
from tests.gate.gate_toy import cases, write_project

METRICS = ["policy", "safety", "utility", "latency", "economics"]
N_BOOT = 100


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, GateResult]:
    """One study of the toy project, gated once (copied by each test before it gates)."""
    root = tmp_path_factory.mktemp("reuse")
    spec = write_project(root / "p", n=80, tunable_surfaces=["top_k"], n_trials=6)
    out = root / "out"
    study_for(spec, out)
    first = run_gate(spec, out_dir=out, ledger_file=root / "ledger.jsonl", n_boot=N_BOOT)
    return spec, out, first


@pytest.fixture
def copy(gated: tuple[Path, Path, GateResult], tmp_path: Path) -> tuple[Path, Path, Path]:
    """The gated project, study, out folder and ledger, copied (spec, out, ledger)."""
    spec, out, _ = gated
    shutil.copytree(spec.parent, tmp_path / "p")
    shutil.copytree(out, tmp_path / "out")
    shutil.copy(out.parent / "ledger.jsonl", tmp_path / "ledger.jsonl")
    return tmp_path / "p" / spec.name, tmp_path / "out", tmp_path / "ledger.jsonl"


def _files(folder: Path) -> dict[str, bytes]:
    """Every file by content; the SQLite study only by name (the copy was taken while this
    process held it open, so its write-ahead log is merged when it is next opened: not a write
    of the gate's)."""
    return {
        str(p.relative_to(folder)): b"" if p.name.startswith("study.db") else p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_the_same_question_is_answered_from_the_record(
    gated: tuple[Path, Path, GateResult], copy: tuple[Path, Path, Path]
) -> None:
    first = gated[2]
    spec, out, ledger_file = copy
    before = _files(out)
    again = run_gate(spec, out_dir=out, ledger_file=ledger_file, n_boot=N_BOOT)
    assert again.run == first.run  # the same record: run id, reads, budget level, verdicts
    assert len(ledger.reads(ledger_file)) == 1  # the held-out set was not read again
    assert _files(out) == before  # nothing written
    pd.testing.assert_frame_equal(again.baseline, first.baseline, check_exact=True)
    for metric in METRICS:  # what the paired-differences figure draws
        pd.testing.assert_frame_equal(
            again.differences(metric), first.differences(metric), check_exact=True
        )
    pd.testing.assert_frame_equal(
        again.ranked.drop(columns=["params", "config_diff"]),
        first.ranked.drop(columns=["params", "config_diff"]),
    )
    same_id = run_gate(spec, out_dir=out, ledger_file=ledger_file, n_boot=N_BOOT,
                       run_id=first.run.run_id)  # fmt: skip
    assert same_id.run == first.run and len(ledger.reads(ledger_file)) == 1


def _version_2(spec: Path) -> dict[str, object]:
    ctx = prepare(load_spec(spec))
    ctx.harness.version = "2"  # type: ignore[attr-defined]
    return {"ctx": ctx}


def _new_heldout(spec: Path) -> dict[str, object]:
    cases("h", 80, 10, seed=9).to_json(spec.parent / "heldout.jsonl", orient="records", lines=True)
    return {}


def _no_cases_file(spec: Path) -> dict[str, object]:
    (spec.parent.parent / "out" / CASES_FILE).unlink()
    return {}


def _foreign_cases_file(spec: Path) -> dict[str, object]:
    """Scores kept by another run (a crash between the two writes): not this record's."""
    path = spec.parent.parent / "out" / CASES_FILE
    path.write_text(path.read_text().replace('"run_id":"eval_', '"run_id":"other_'))
    return {}


@pytest.mark.parametrize(
    "change",
    [
        lambda spec: {"n_boot": N_BOOT + 1},
        lambda spec: {"alpha": 0.1},
        lambda spec: {"seed": 1},
        lambda spec: {"run_id": "eval_other"},
        _version_2,
        _new_heldout,
        _no_cases_file,
        _foreign_cases_file,
    ],
    ids=[
        "n_boot",
        "alpha",
        "seed",
        "run_id",
        "harness_version",
        "heldout_set",
        "no_cases_file",
        "foreign_cases_file",
    ],
)
def test_a_changed_input_is_gated_again(
    gated: tuple[Path, Path, GateResult], copy: tuple[Path, Path, Path], change
) -> None:
    spec, out, ledger_file = copy
    kwargs = {"n_boot": N_BOOT, **change(spec)}
    again = run_gate(spec, out_dir=out, ledger_file=ledger_file, **kwargs)
    assert again.run.run_id != gated[2].run.run_id
    assert len(ledger.reads(ledger_file)) == 2
    assert reusable(out, again.run.inputs_hash or "", None) is not None  # kept for next time


@settings(max_examples=40, deadline=None)
@given(
    data_frames(
        [column(m, dtype=float) for m in METRICS[:3]],
        index=range_indexes(min_size=1, max_size=6),
    )
)
def test_per_case_scores_round_trip_exactly(frame: pd.DataFrame) -> None:
    """Every float (NaN: a metric not scored on a case; infinities) comes back bit for bit."""
    frame.index = pd.Index([f"c{i}" for i in range(len(frame))], name="case_id")
    back = scores_frame(json.loads(json.dumps(scores_json(frame))))
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert all(
        (math.isnan(a) and math.isnan(b)) or a == b
        for a, b in zip(back.to_numpy().ravel(), frame.to_numpy().ravel(), strict=True)
    )
