"""A store belongs to one project: recorded at its first write, used by every later command,
a mismatching `--project` refused naming both; `next:` lines run as printed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.store.project_binding import recorded_project

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)  # not a project: only the store can say which one
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)

    def call(*argv: str, code: int = 0) -> tuple[str, str]:
        got = main(list(argv))
        out, err = capsys.readouterr()
        assert got == code, f"{argv}: exit {got}\n{out}\n{err}"
        return out, err

    return call


def next_line(out: str, err: str) -> list[str]:
    """The first alternative of the printed `next:` line, as argv (without `contextos-lab`)."""
    line = re.search(r"^next: (.+)$", out + err, re.M)
    assert line, f"no next: line\n{out}{err}"
    command = line.group(1).split("   ")[0]
    words = shlex.split(command)
    assert words[0] == "contextos-lab", command
    return words[1:]


def test_the_store_keeps_its_project_and_refuses_another(run, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    data = PROJECT / "data"
    out, err = run(
        "ingest", "decisions", str(data / "decisions.jsonl"), "--store", store,
        "--project", str(PROJECT),
    )  # fmt: skip
    recorded = recorded_project(store)
    assert recorded is not None and recorded.name == "coding_agent"
    assert recorded.root == PROJECT.resolve() and len(recorded.registry_sha256) == 64
    # the printed next command runs as printed: it names the project, the store, the file
    argv = next_line(out, err)
    assert argv[:2] == ["ingest", "feedback"] and "--store" in argv and "--project" in argv
    out, err = run(*argv)
    assert "accepted 70" in out
    argv = next_line(out, err)
    assert argv[0] == "cluster", argv
    out, err = run(*argv)
    assert "merged_without_tests" in out
    # no --project, no $CONTEXTOS_PROJECT, cwd not a project: the store's project is used
    out, _ = run("store", "verify", "--store", store)
    assert "ok" in out.lower() and "TAMPERED" not in out
    run("metrics", "--store", store, "--json")
    out, err = run("propose", "--reason-class", "merged_without_tests", "--store", store)
    assert "R_MERGE_REQUIRES_CI" in out
    # another project named explicitly: one line naming both, exit 2
    _, err = run("metrics", "--store", store, "--project", str(BUNDLED_PROJECT), code=2)
    assert err.count("\n") == 1 and "coding_agent" in err and "refund" in err.lower()
    assert "--project" in err
    # ... and through the environment too
    import os

    os.environ["CONTEXTOS_PROJECT"] = str(BUNDLED_PROJECT)
    try:
        _, err = run("store", "verify", "--store", store, code=2)
    finally:
        del os.environ["CONTEXTOS_PROJECT"]
    assert "CONTEXTOS_PROJECT" in err and "coding_agent" in err


def test_a_store_whose_project_folder_moved_needs_project(run, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "desk"
    shutil.copytree(PROJECT, copy)
    store = f"sqlite:///{tmp_path}/s.db"
    run(
        "ingest", "decisions", str(copy / "data" / "decisions.jsonl"), "--store", store,
        "--project", str(copy),
    )  # fmt: skip
    moved = tmp_path / "elsewhere"
    copy.rename(moved)
    _, err = run("metrics", "--store", store, code=2)
    assert "gone" in err and "--project" in err
    run("metrics", "--store", store, "--project", str(moved))  # the same project, moved


def test_sweep_and_gate_hand_the_project_to_their_notebooks(run, tmp_path, monkeypatch) -> None:
    """Notebook kernels inherit the environment: the command's project is exported as
    $CONTEXTOS_PROJECT while it runs (the seam below `main`: our own job function, replaced
    to record what a kernel would see), and restored after."""
    import os

    import contextos_lab.cli.sweep as sweep

    seen: dict[str, str | None] = {}

    def record(*_a, **_k):
        seen["project"] = os.environ.get("CONTEXTOS_PROJECT")
        raise sweep.JobError("stopped after recording", 2)

    monkeypatch.setattr(sweep, "run_sweep", record)
    run("sweep", "spec.yaml", "--out", str(tmp_path / "o"), "--project", str(PROJECT), code=2)
    assert seen["project"] == str(PROJECT.resolve())
    assert "CONTEXTOS_PROJECT" not in os.environ


def test_an_altered_binding_is_a_verify_verdict_not_a_project(run, tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "s.db"
    store = f"sqlite:///{db}"
    run("ingest", "decisions", str(PROJECT / "data" / "decisions.jsonl"), "--store", store,
        "--project", str(PROJECT))  # fmt: skip
    with sqlite3.connect(db) as conn:  # someone with the database but not the key
        conn.execute("UPDATE project_binding SET name = 'refund_desk'")
    assert recorded_project(store) is None  # its MAC fails: it names no project
    out, err = run("store", "verify", "--store", store, code=1)
    assert "malformed_row" in out + err and "project binding" in out + err


def test_a_first_write_with_no_project_named_is_refused(run, tmp_path: Path) -> None:
    """Issue 40: the bundled example is a fallback for reading, never a store's project by
    default; nothing is bound or stored, and no "belongs to" line is printed."""
    from contextos_lab.store.experience_store import ExperienceStore

    store = f"sqlite:///{tmp_path}/s.db"
    decisions = str(PROJECT / "data" / "decisions.jsonl")
    out, err = run("ingest", "decisions", decisions, "--store", store, code=2)
    assert err.count("\n") == 1 and "--project" in err and "nothing was written" in err
    assert "belongs to" not in out + err
    assert recorded_project(store) is None
    assert ExperienceStore(store, create=False).count() == 0
    # named: the first write binds it, and says so once
    out, _ = run("ingest", "decisions", decisions, "--store", store, "--project", str(PROJECT))
    assert f"store {store} now belongs to project coding_agent" in out
    feedback = str(PROJECT / "data" / "feedback.jsonl")
    out, _ = run("ingest", "feedback", feedback, "--store", store)  # the store's project
    assert "belongs to" not in out and "accepted 70" in out


def test_the_demo_binds_its_own_store_to_the_bundled_example(tmp_path: Path) -> None:
    from contextos_lab.cli.demo import ingest_sample
    from contextos_lab.domain.active import cached_project, use_project

    (tmp_path / ".contextos").mkdir()  # as `demo` makes it
    previous = use_project(cached_project(BUNDLED_PROJECT), named=False)  # as `demo` alone
    try:
        assert "accepted" in ingest_sample(tmp_path, "synthetic:30:7")
    finally:
        use_project(previous)
    recorded = recorded_project(f"sqlite:///{(tmp_path / 'store.db').resolve()}")
    assert recorded is not None and recorded.root == BUNDLED_PROJECT
