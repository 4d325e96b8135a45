"""The loop runs as the CLI prints it: each step is the previous step's `next:` line, run as
printed (only a person's name and a rationale filled in), with no $CONTEXTOS_PROJECT, on a
freshly `project init`-ed folder and on the coding-agent example."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from contextos_lab.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _next(out: str, err: str) -> list[str]:
    found = re.findall(r"^next: (.+)$", out + err, re.M)
    assert found, f"no next: line\n{out}\n{err}"
    command = found[-1].split("   ")[0]
    words = shlex.split(command)
    assert words[0] == "contextos-lab", command
    return words[1:]


def _fill(argv: list[str], reviewers: list[str], approver: str) -> list[str]:
    """A person's name and a rationale: the only things a next: line leaves to the user."""
    out = []
    for i, word in enumerate(argv):
        flag = argv[i - 1] if i else ""
        if word == "NAME":
            word = reviewers.pop(0) if flag == "--reviewer" else approver
        elif word == "TEXT":
            word = "checked the diff, the replay and the lineage"
        assert not (word.isalpha() and word.isupper()), f"a placeholder left in {argv}"
        out.append(word)
    return out


def follow(first: list[str], capsys, reviewers: list[str], approver: str, steps: int) -> list:
    """Run `first`, then each printed next command; returns [(argv, out, err)]."""
    ran = []
    argv = first
    for _ in range(steps):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, f"{argv}: exit {code}\n{out}\n{err}"
        ran.append((argv, out, err))
        if argv[0] == "bundle":
            break
        argv = _fill(_next(out, err), reviewers, approver)
    return ran


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("CONTEXTOS_PROJECT", "CONTEXTOS_OVERRIDERS_FILE", "CONTEXTOS_STORE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _commands(ran: list) -> list[str]:
    return [" ".join(argv[:2]) for argv, _, _ in ran]


def test_the_chain_runs_as_printed_on_a_fresh_project(clean_env: Path, capsys) -> None:
    reviewers = ["reviewer_bo", "reviewer_cy", "reviewer_di"]
    ran = follow(["project", "init", "desk"], capsys, reviewers, "approver_eve", 30)
    done = _commands(ran)
    for step in ("project --check", "ingest decisions", "ingest feedback", "cluster --project",
                 "propose --reason-class", "release", "monitor", "metrics"):  # fmt: skip
        assert any(d.startswith(step.split()[0]) for d in done), (step, done)
    assert sum(d.startswith("review ") for d in done) == 3
    release = next(out for argv, out, _ in ran if argv[0] == "release")
    assert '"status": "released"' in release
    assert not reviewers  # three distinct reviewers were asked for
    # the default store knows its project: no --project, no $CONTEXTOS_PROJECT, cwd no project
    rule = re.search(r'"rule_id": "(str_\w+)"', release).group(1)
    for argv in (["lineage", rule], ["store", "verify"], ["metrics", "--json"]):
        assert main(argv) == 0, argv
    out, _ = capsys.readouterr()
    assert "TAMPERED" not in out and "1 operator corrections" not in out


def test_the_chain_runs_as_printed_on_the_coding_agent(clean_env: Path, capsys) -> None:
    project = clean_env / "coding_agent"
    shutil.copytree(EXAMPLES / "coding_agent", project)
    reviewers = ["eng_lead_ada", "sre_oncall_lin", "security_owner_kim"]
    first = ["project", "--check", "--project", str(project)]
    ran = follow(first, capsys, reviewers, "cc_board", 30)
    done = _commands(ran)
    assert sum(d.startswith("review ") for d in done) == 3
    assert any(d.startswith("release") for d in done) and any(d.startswith("monitor") for d in done)


def test_the_chain_runs_as_printed_on_the_bundled_refund_desk(clean_env: Path, capsys) -> None:
    from contextos_lab.domain.loader import BUNDLED_PROJECT
    from contextos_lab.example.loop_example import APPROVER, REVIEWERS

    reviewers = [REVIEWERS[r] for r in ("compliance", "reliability", "security")]
    ran = follow(["project", "--check", "--project", str(BUNDLED_PROJECT)], capsys, reviewers,
                 APPROVER, 30)  # fmt: skip
    done = _commands(ran)
    assert any(d.startswith("propose --reason-class") for d in done), done
    assert sum(d.startswith("review ") for d in done) == 3
    assert any(d.startswith("release") for d in done) and any(d.startswith("monitor") for d in done)
