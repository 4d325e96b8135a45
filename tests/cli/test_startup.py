"""Start-up: `--help`, every `COMMAND --help` and the light commands import only what they use
(issue 40). Each check runs in a fresh interpreter and reads its `sys.modules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.cli.app import build_parser
from contextos_lab.cli.registry import COMMANDS

#: What no light command may pay for: the analysis and search stacks.
HEAVY = ("pandas", "scipy", "sklearn", "statsmodels", "optuna", "matplotlib")

#: Runs `main(argv)` for each argv in turn, printing after each the heavy modules loaded so far.
PROBE = """
import json, sys
from contextos_lab.cli.app import main
heavy = {heavy!r}
for argv in json.loads(sys.argv[1]):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    loaded = sorted(h for h in heavy if h in sys.modules)
    print(json.dumps({{"argv": argv, "code": code, "heavy": loaded}}), flush=True)
"""


def _probe(*argvs: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), json.dumps(list(argvs))],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(argvs), proc.stderr[-2000:]
    return rows


def test_help_and_every_command_help_import_no_heavy_library(tmp_path: Path) -> None:
    """One interpreter, commands in turn: the first to load a heavy library is named."""
    argvs = [["--help"], *([name, "--help"] for name in COMMANDS)]
    for row in _probe(*argvs, cwd=tmp_path):
        assert row["code"] == 0, row
        assert row["heavy"] == [], f"`contextos-lab {' '.join(row['argv'])}` imports {row}"


def test_light_commands_import_no_heavy_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextos_lab.store.experience_store import ExperienceStore

    monkeypatch.setenv("CONTEXTOS_HOME", str(tmp_path / "home"))  # no signing key here
    ExperienceStore(f"sqlite:///{tmp_path / 'empty.db'}", create=True)
    (tmp_path / "runs.jsonl").write_text("", encoding="utf-8")
    light = {
        "project --check": ["project", "--check"],
        "project": ["project"],
        "store verify": ["store", "verify", "--store", f"sqlite:///{tmp_path / 'empty.db'}"],
        "runs tail": ["runs", "tail", str(tmp_path / "runs.jsonl")],
        "schema": ["schema", "--out", str(tmp_path / "schemas")],
    }
    for name, argv in light.items():  # one interpreter each: none inherits another's imports
        (row,) = _probe(argv, cwd=tmp_path)
        assert row["heavy"] == [], f"`contextos-lab {name}` imports {row['heavy']}"


def test_the_registry_lists_every_command_once_and_builds_only_the_one_invoked() -> None:
    full = build_parser()
    (sub,) = [a for a in full._actions if a.__class__.__name__ == "_SubParsersAction"]
    assert list(sub.choices) == list(COMMANDS)  # the table's order is --help's order
    for name, parser in sub.choices.items():
        assert parser.epilog and "contextos-lab " + name in parser.epilog  # a real parser
    one = build_parser("replay")
    (sub,) = [a for a in one._actions if a.__class__.__name__ == "_SubParsersAction"]
    assert sub.choices["replay"].epilog  # built
    assert sub.choices["search"].epilog is None  # a one-line stub: search's module not needed
    help_lines = {a.dest: a.help for a in sub._choices_actions}
    assert help_lines == {n: c.summary for n, c in COMMANDS.items()}
