"""Classes with corrections but no cluster are listed with their counts and the flag that
would include them."""

from __future__ import annotations

from pathlib import Path

from contextos_lab.cli.app import main

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"


def test_cluster_lists_classes_under_the_minimum(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    store = ["--store", f"sqlite:///{tmp_path}/s.db", "--project", str(CODING)]
    data = CODING / "data"
    assert main(["ingest", "decisions", str(data / "decisions.jsonl"), *store]) == 0
    assert main(["ingest", "feedback", str(data / "feedback.jsonl"), "--overriders",
                 str(data / "authorised_overriders.json"), *store]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["cluster", *store, "--min-cluster-size", "9"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("no cluster: ")]
    assert any(
        ln.startswith("no cluster: runaway_loop on code.command.run: 7 in search (+1 held out)")
        and "--min-cluster-size 7" in ln
        for ln in lines
    ), out
    assert not any("merged_without_tests" in ln for ln in lines)  # it clusters
    # the flag named does include it
    assert main(["cluster", *store, "--min-cluster-size", "7"]) == 0
    out = capsys.readouterr().out
    assert "x runaway_loop on code.command.run" in out
    assert "no cluster: runaway_loop" not in out
