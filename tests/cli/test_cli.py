"""The CLI tree: every stage's commands are wired in."""

from __future__ import annotations

import importlib

import pytest

from contextos_lab.cli.app import COMMAND_MODULES, main


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_every_command_module_imports_and_registers(name: str) -> None:
    module = importlib.import_module(name)
    assert callable(module.register)


def test_help_lists_commands(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("schema", "store", "demo"):
        assert command in out
