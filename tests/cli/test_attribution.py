"""`contextos-lab attribution calibrate|score` and `cluster --attribution-weights`."""

from __future__ import annotations

import json
import threading

import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.attribution.registry import WEIGHTS_ENV
from tests.insights.attribution.traces import annotate, group_chat_run, write_runs


@pytest.fixture
def annotated(tmp_path):
    runs = [annotate(group_chat_run(i), "Verification_Expert", 3, "assumed data") for i in range(6)]
    return write_runs(tmp_path / "runs", runs)


def test_calibrate_writes_weights_that_score_uses(annotated, tmp_path, capsys) -> None:
    out = tmp_path / "w.json"
    assert main(["attribution", "calibrate", str(annotated), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "6 annotated runs" in printed and "leave-one-run-out" in printed
    saved = json.loads(out.read_text())
    assert saved["runs"] == 6 and saved["prior"] == "bundled" and saved["prior_strength"] > 0
    assert main(["attribution", "score", str(annotated), "--weights", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"runs", "agent", "step", "trivial"} and result["runs"] == 6
    assert set(result["agent"]) == set(result["step"]) == {"top1", "top3"}
    assert result["step"]["top3"] >= result["step"]["top1"]
    assert result["step"]["top1"] == 1.0  # six runs saying the same thing were learnt
    assert main(["attribution", "score", str(annotated)]) == 0
    table = capsys.readouterr().out
    assert "top-3" in table and "step_most_common" in table
    assert "attributor default\n" in table
    # the file is named as `cluster --attribution-weights` names it in insights.json
    assert main(["attribution", "score", str(annotated), "--weights", str(out)]) == 0
    assert f"attributor calibrated ({out.resolve()})" in capsys.readouterr().out


def test_bad_weights_and_unannotated_folders_are_one_line(annotated, tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"weights": {"no_such_feature": 1.0}}))
    assert main(["attribution", "score", str(annotated), "--weights", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "weights" in err and "no_such_feature" in err
    assert "Traceback" not in err
    bare = write_runs(tmp_path / "bare", [group_chat_run(1)])
    assert main(["attribution", "score", str(bare)]) == 2
    assert "no failed run" in capsys.readouterr().err
    assert (
        main(
            [
                "cluster",
                str(annotated),
                "--out",
                str(tmp_path / "o"),
                "--attribution-weights",
                str(bad),
            ]
        )
        == 2
    )
    assert str(bad) in capsys.readouterr().err


def test_what_is_not_scored_is_named_on_stderr(annotated, capsys) -> None:
    """A malformed annotation or an unreadable file was dropped without a word."""
    bad = json.loads((annotated / "0.json").read_text()) | {"mistake_step": "seven"}
    (annotated / "0.json").write_text(json.dumps(bad))
    (annotated / "broken.json").write_text('{"history": [')
    assert main(["attribution", "score", str(annotated), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"] == 5
    assert "0.json: field mistake_step: malformed: 'seven'" in captured.err
    assert f"{annotated / 'broken.json'}:1:" in captured.err and "Traceback" not in captured.err


def test_cluster_uses_calibrated_weights_and_restores_the_environment(
    annotated, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.delenv(WEIGHTS_ENV, raising=False)
    weights = tmp_path / "w.json"
    assert main(["attribution", "calibrate", str(annotated), "--out", str(weights)]) == 0
    out = tmp_path / "o"
    args = [
        "cluster",
        str(annotated),
        "--out",
        str(out),
        "--heldout-fraction",
        "0",
        "--text-backend",
        "none",
    ]
    assert main([*args, "--attribution-weights", str(weights)]) == 0
    report = json.loads((out / "insights.json").read_text())
    used = {a["attributor"] for a in _attributions(report)}
    assert used == {f"calibrated ({weights.resolve()})"}
    assert WEIGHTS_ENV not in __import__("os").environ
    assert main(args) == 0
    report = json.loads((out / "insights.json").read_text())
    assert {a["attributor"] for a in _attributions(report)} == {"default"}


def _attributions(report: dict) -> list[dict]:
    return report["attributions"]


def test_cluster_uses_the_attributor_it_is_given_by_name_or_path(
    annotated, tmp_path, capsys
) -> None:
    args = ["cluster", str(annotated), "--heldout-fraction", "0", "--text-backend", "none"]
    for ref in (
        "last-actor-before-error",
        "contextos_lab.insights.attribution.linear:LastActorBeforeErrorRule",
    ):
        out = tmp_path / ref.replace(":", "_")
        assert main([*args, "--out", str(out), "--attributor", ref, "--workers", "1"]) == 0
        used = {
            a["attributor"] for a in _attributions(json.loads((out / "insights.json").read_text()))
        }
        assert used == {"last-actor-before-error"}
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "x"), "--attributor", "no-such-judge"]) == 2
    err = capsys.readouterr().err
    assert "unknown attributor 'no-such-judge'" in err and "Traceback" not in err


class _Locked:
    """A plug-in attributor that cannot be pickled (like the llm-judge: a lock, a client)."""

    name = "locked"

    def __init__(self) -> None:
        from contextos_lab.insights.attribution.registry import default_attributor

        self._lock = threading.Lock()
        self._inner = default_attributor()

    def attribute(self, run):
        with self._lock:
            return self._inner.attribute(run)


def locked() -> _Locked:
    return _Locked()


def test_an_attributor_that_cannot_be_pickled_is_used_in_this_process(
    annotated, tmp_path, capsys
) -> None:
    """`cluster --attributor llm-judge` hung on a machine with two cores (the judge was sent to
    the process pool); the guard keeps a hang from stalling the suite."""
    from contextos_lab.cli.insights import _pool_workers
    from contextos_lab.insights.attribution.registry import default_attributor

    assert _pool_workers(default_attributor(), 2) == 2
    assert _pool_workers(_Locked(), 2) == 1
    out = tmp_path / "o"
    args = ["cluster", str(annotated), "--out", str(out), "--heldout-fraction", "0",
            "--text-backend", "none", "--attributor", f"{__name__}:locked",
            "--workers", "2"]  # fmt: skip
    done: list[int] = []
    run = threading.Thread(target=lambda: done.append(main(args)), daemon=True)
    run.start()
    run.join(300)
    assert done == [0], "cluster hung or failed"
    assert "cannot go to worker processes" in capsys.readouterr().err
    used = {a["attributor"] for a in _attributions(json.loads((out / "insights.json").read_text()))}
    assert used == {"default"}


def test_a_step_outside_the_run_is_named_by_file_line_and_field(tmp_path, capsys) -> None:
    """`mistake_step: 99` (or -1) was scored as a miss without a word, and a malformed step in
    a JSON-lines file was named by its file only, not its line."""
    rows = [annotate(group_chat_run(i), "Data_Expert", 1, "x") for i in range(4)]
    rows[1]["mistake_step"], rows[2]["mistake_step"], rows[3]["mistake_step"] = "99", -1, "two"
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["attribution", "score", str(folder), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"] == 1
    assert "r.jsonl:2: field mistake_step: 99 is outside the run (steps 0-4)" in captured.err
    assert "r.jsonl:3: field mistake_step: -1 is outside the run (steps 0-4)" in captured.err
    assert "r.jsonl:4: field mistake_step: malformed: 'two'" in captured.err
    (folder / "r.jsonl").write_text(json.dumps(rows[1]) + "\n")
    assert main(["attribution", "calibrate", str(folder), "--out", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "r.jsonl: field mistake_step: 99 is outside the run" in err  # one run: no line
    assert "nothing to calibrate" in err and "Traceback" not in err


def test_an_out_path_that_cannot_be_written_is_refused_before_the_fit(
    annotated, tmp_path, capsys, monkeypatch
) -> None:
    """`--out` naming a folder failed with a bare `[Errno 21]` after the whole calibration."""
    import contextos_lab.insights.attribution.calibrate as cal

    monkeypatch.setattr(cal, "calibrate_chosen", lambda *a: pytest.fail("fitted first"))
    assert main(["attribution", "calibrate", str(annotated), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path}: is a folder" in err and "Traceback" not in err


def test_cluster_help_says_where_the_llm_judge_reads_its_endpoint(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["cluster", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(f"CONTEXTOS_JUDGE_{v}" in text for v in ("BASE_URL", "MODEL", "API_KEY"))
