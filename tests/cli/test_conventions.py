"""CLI conventions for every subcommand: an example in --help; misuse is one line and exit 2."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.bundled import REPO_ROOT
from contextos_lab.cli.app import build_parser
from contextos_lab.cli.conventions import iso_datetime, positive_int
from contextos_lab.errors import EXIT_STORAGE

SPEC = str(REPO_ROOT / "specs" / "reference_refund.yaml")


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _subparsers(sub, (*path, name))


def test_every_subcommand_help_ends_with_an_example() -> None:
    found = list(_subparsers(build_parser()))
    assert len(found) >= 10
    missing = [" ".join(p) for p, sub in found if "contextos-lab" not in (sub.epilog or "")]
    assert not missing, f"no example in --help of: {missing} (use cli_conventions.add_command)"
    for path, sub in found:
        assert sub.epilog.startswith(("example:", "examples:")), path
        assert "contextos-lab " + path[0] in sub.epilog, (path, sub.epilog)


def test_help_shows_the_example(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["search", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out and "contextos-lab search my_run.yaml --out out/search" in out


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextos_lab.cli", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


MISUSES = {
    "cluster --since yesterday": ["cluster", "synthetic", "--out", "o", "--since", "yesterday"],
    "cluster --since without zone": ["cluster", "synthetic", "--out", "o", "--since", "2026-04-01"],
    "cluster /nope": ["cluster", "/nope", "--out", "o"],
    "cluster empty file": ["cluster", "empty.jsonl", "--out", "o"],
    "search --workers 0": ["search", SPEC, "--out", "o", "--workers", "0"],
    "search --n-trials 0": ["search", SPEC, "--out", "o", "--n-trials", "0"],
    "sweep --n-trials 0": ["sweep", SPEC, "--out", "o", "--n-trials", "0"],
    "sweep --workers x": ["sweep", SPEC, "--out", "o", "--workers", "x"],
    "demo --out /proc/nope": ["demo", "--out", "/proc/nope/demo"],
    "gate without a searched study": ["gate", "--spec", SPEC, "--out", "o"],
    "gate --study typo": ["gate", "--spec", SPEC, "--out", "o", "--study", "nope"],
    "unknown flag": ["search", SPEC, "--out", "o", "--bogus"],
    "ingest a missing file": ["ingest", "decisions", "/nope.jsonl", "--store", "sqlite:///s.db"],
    "ingest an empty file": ["ingest", "decisions", "empty.jsonl", "--store", "sqlite:///s.db"],
    "dashboard without a study": ["dashboard", "--out", "o"],
    "dashboard on a missing sqlite file": ["dashboard", "--storage", "sqlite:///missing.db"],
    "ingest: unknown store scheme": [
        "ingest",
        "decisions",
        "garbage.jsonl",
        "--store",
        "bogus://x",
    ],
    "store verify: no store": ["store", "verify", "--store", "sqlite:///missing.db"],
    "store verify: not a URL": ["store", "verify", "--store", "notaurl"],
    "metrics: no store": ["metrics", "--store", "sqlite:///missing.db"],
    "cluster: every row malformed": ["cluster", "garbage.jsonl", "--out", "o"],
    "cluster: no source": ["cluster", "--out", "o"],
    "preferences: empty file": ["preferences", "empty.jsonl"],
    "runs tail: missing file": ["runs", "tail", "/nope.jsonl"],
    "runs tail: empty file": ["runs", "tail", "empty.jsonl"],
    "runs tail: only malformed lines": ["runs", "tail", "garbage.jsonl"],
    "cases import: empty file": ["cases", "import", "empty.jsonl", "--out", "o"],
    "search: not a spec": ["search", "garbage.jsonl", "--out", "o"],
    "search: unknown storage scheme": ["search", SPEC, "--out", "o", "--storage", "bogus://x"],
    "sweep: storage folder missing": [
        "sweep",
        SPEC,
        "--out",
        "o",
        "--storage",
        "sqlite:////nope/s.db",
    ],
    "sweep: --insights missing": ["sweep", SPEC, "--out", "o", "--insights", "/nope.json"],
    "gate: --store missing": ["gate", "--spec", SPEC, "--out", "o", "--store", "sqlite:///none.db"],
    "heldout status: --ledger missing": [
        "heldout",
        "status",
        "--spec",
        SPEC,
        "--ledger",
        "/no.jsonl",
    ],
    "heldout refresh: empty source": [
        "heldout",
        "refresh",
        "--spec",
        SPEC,
        "--from",
        "empty.jsonl",
        "--out",
        "o",
    ],
    "release --at yesterday": ["release", "x", "--approver", "me", "--at", "yesterday"],
    "enqueue: config not JSON": [
        "enqueue",
        SPEC,
        "--out",
        "o",
        "--config",
        "nope",
        "--by",
        "me",
        "--rationale",
        "r",
    ],
}
#: A server that refuses connections: not a user error but a runtime failure (exit 3).
SILENT_SERVER = "postgresql://nobody@127.0.0.1:1/db"
UNREACHABLE = {
    "search --storage": ["search", SPEC, "--out", "o", "--storage", SILENT_SERVER],
    "gate --storage": ["gate", "--spec", SPEC, "--out", "o", "--storage", SILENT_SERVER],
    "dashboard --storage": ["dashboard", "--storage", SILENT_SERVER],
    "ingest --store": ["ingest", "decisions", "garbage.jsonl", "--store", SILENT_SERVER],
    "metrics --store": ["metrics", "--store", SILENT_SERVER],
}


def _inputs(folder: Path) -> None:
    (folder / "empty.jsonl").write_text("", encoding="utf-8")
    (folder / "garbage.jsonl").write_text("{not json\n", encoding="utf-8")


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_misuse_is_one_line_on_stderr_and_exit_2(case: str, tmp_path: Path) -> None:
    _inputs(tmp_path)
    proc = _cli(*MISUSES[case], cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (case, proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1, (case, proc.stderr)
    assert "error" in lines[0] and "Traceback" not in proc.stderr
    if case.startswith("gate"):  # refused before any kernel: no empty study left behind
        import optuna

        db = tmp_path / "o" / "study.db"  # absent when refused before the storage was opened
        assert not db.exists() or optuna.get_all_study_names(f"sqlite:///{db}") == []


@pytest.mark.parametrize("case", sorted(UNREACHABLE))
def test_unreachable_server_is_one_line_and_exit_3(case: str, tmp_path: Path) -> None:
    """Retry-able, so not a user error; still one line, and the table in `errors` says 3."""
    _inputs(tmp_path)
    proc = _cli(*UNREACHABLE[case], cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == EXIT_STORAGE, (case, proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: storage unreachable"), proc.stderr
    assert "nobody@127.0.0.1:1" in lines[0]  # names what it tried


def test_type_helpers_reject_and_accept() -> None:
    assert positive_int("3") == 3
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_int(bad)
    assert iso_datetime("2026-04-01T00:00:00Z").tzinfo is not None
    for bad in ("yesterday", "2026-04-01"):
        with pytest.raises(argparse.ArgumentTypeError):
            iso_datetime(bad)


def test_exit_status_table_is_the_same_in_readme_help_and_code(capsys) -> None:
    import re

    from contextos_lab.errors import EXIT_STATUSES

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    rows = [int(c) for c in re.findall(r"^\| (\d) \| ", readme, flags=re.MULTILINE)]
    assert rows == sorted(EXIT_STATUSES), rows
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    assert "exit status: 0 done" in " ".join(capsys.readouterr().out.split())
