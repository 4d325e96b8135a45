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
#: What no `--help` needs either: the envelopes (pydantic models; `schemas.base` is the one every
#: envelope module imports), pydantic itself, the YAML parser and the store (SQLAlchemy).
MODELS = ("pydantic", "contextos_lab.schemas.base", "yaml", "sqlalchemy")
#: The domain project's configuration, which a command that reads none does not load.
PROJECT = ("contextos_lab.domain.config", "contextos_lab.domain.loader")

#: Runs `main(argv)` for each argv in turn, printing after each the watched modules (and their
#: submodules) loaded so far.
PROBE = """
import json, sys
from contextos_lab.cli.app import main
watch = {watch!r}
for argv in json.loads(sys.argv[1]):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    loaded = sorted(m for m in watch if any(n == m or n.startswith(m + ".") for n in sys.modules))
    print(json.dumps({{"argv": argv, "code": code, "heavy": loaded}}), flush=True)
"""


def _probe(
    *argvs: list[str], cwd: Path, env: dict[str, str] | None = None, watch: tuple = HEAVY
) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(watch=watch), json.dumps(list(argvs))],
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


def test_help_and_every_command_help_load_no_envelope_nor_pydantic(tmp_path: Path) -> None:
    """`COMMAND --help` builds argparse choices and defaults from plain constants
    (`schemas.vocabulary`, `loaders.kinds`, `proposals.monitor.window_days`), not the models."""
    argvs = [["--help"], *([name, "--help"] for name in COMMANDS)]
    for row in _probe(*argvs, cwd=tmp_path, watch=MODELS):
        assert row["code"] == 0, row
        assert row["heavy"] == [], f"`contextos-lab {' '.join(row['argv'])}` imports {row}"


def test_light_commands_import_no_heavy_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No heavy library, and each loads only what it uses: the record reader needs no secret
    redaction (nor `requests`, which a redaction scanner brings), the project's configuration no
    envelope, its check only the envelopes of the files it reads; only `store verify` opens a
    store. Each exits 0: its imports are those of the command doing its work."""
    from contextos_lab.store.experience_store import ExperienceStore

    monkeypatch.setenv("CONTEXTOS_HOME", str(tmp_path / "home"))  # no signing key here
    ExperienceStore(f"sqlite:///{tmp_path / 'empty.db'}", create=True)
    record = {
        "command_id": "cmd_1",
        "command": ["true"],
        "cwd": str(tmp_path),
        "started_at": "2026-01-01T00:00:00+00:00",
        "duration_ms": 1.0,
        "exit_code": 0,
        "stdout_tail": "",
        "stderr_tail": "",
        "stdout_lines": 0,
        "stderr_lines": 0,
    }
    (tmp_path / "runs.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    light = {  # name -> (argv, what it must not load besides HEAVY)
        "project --check": (
            ["project", "--check"],
            ("contextos_lab.schemas.tuning", "contextos_lab.loaders.records", "sqlalchemy"),
        ),
        "project": (
            ["project"],
            ("contextos_lab.schemas.base", "contextos_lab.loaders.records", "sqlalchemy"),
        ),
        "store verify": (  # an empty store: nothing to validate, no project to read it with
            ["store", "verify", "--store", f"sqlite:///{tmp_path / 'empty.db'}"],
            MODELS + PROJECT,
        ),
        "runs tail": (
            ["runs", "tail", str(tmp_path / "runs.jsonl")],
            ("contextos_lab.harness.redaction", "requests", "contextos_lab.schemas.base", *PROJECT),
        ),
        "schema": (["schema", "--out", str(tmp_path / "schemas")], ("sqlalchemy", *PROJECT)),
    }
    for name, (argv, unused) in light.items():  # one interpreter each: none inherits imports
        (row,) = _probe(argv, cwd=tmp_path, watch=HEAVY + unused)
        assert row["heavy"] == [], f"`contextos-lab {name}` imports {row['heavy']}"
        assert row["code"] == 0, row


def test_store_verify_reads_a_sqlite_store_with_rows_without_sqlalchemy(tmp_path: Path) -> None:
    """A SQLite store is read with sqlite3 (`store.raw_rows`): the chain, its bodies and the
    project it recorded are checked, and SQLAlchemy is never loaded."""
    from contextos_lab.store.experience_store import ExperienceStore
    from tests.factories import decision_record

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = ExperienceStore(url)
    store.append(decision_record(1))
    store.append(decision_record(2))
    (row,) = _probe(["store", "verify", "--store", url], cwd=tmp_path, watch=("sqlalchemy",))
    assert row["code"] == 0 and row["heavy"] == [], row


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
