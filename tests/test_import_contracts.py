"""The import contracts (.importlinter) cover the whole package, and hold.

A new top-level package or module that no layer names would sit outside the stage order, so an
upward import from it would go unnoticed: the contract file must name every one. Likewise every
sub-package of a stage that has its own contract.
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "contextos_lab"


def _contracts() -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter", encoding="utf-8")
    return {
        section.removeprefix("importlinter:contract:"): dict(parser[section])
        for section in parser.sections()
        if section.startswith("importlinter:contract:")
    }


def _layer_names(contract: dict[str, str]) -> set[str]:
    return {
        name.strip()
        for line in contract["layers"].splitlines()
        for name in re.split(r"[|:]", line)
        if name.strip()
    }


def _children(package: Path) -> set[str]:
    """Sub-packages and modules of a package (no dunder modules, no data-only folders)."""
    modules = {p.stem for p in package.glob("*.py") if not p.stem.startswith("__")}
    packages = {p.parent.name for p in package.glob("*/__init__.py")}
    return modules | packages


def test_the_stage_contract_names_every_top_level_package_and_module() -> None:
    stages = _contracts()["stages"]
    assert stages["type"] == "layers"
    assert stages["containers"].strip() == "contextos_lab"
    missing = _children(PACKAGE) - _layer_names(stages)
    assert not missing, f"not in any layer of .importlinter [stages]: {sorted(missing)}"
    unknown = _layer_names(stages) - _children(PACKAGE)
    assert not unknown, f".importlinter [stages] names what does not exist: {sorted(unknown)}"


def test_every_sub_package_of_a_contracted_stage_is_a_layer() -> None:
    for name, contract in _contracts().items():
        if contract["type"] != "layers" or contract["containers"].strip() == "contextos_lab":
            continue
        container = PACKAGE.joinpath(*contract["containers"].strip().split(".")[1:])
        subpackages = {p.parent.name for p in container.glob("*/__init__.py")}
        missing = subpackages - _layer_names(contract)
        assert not missing, f".importlinter [{name}] leaves out {sorted(missing)}"


def test_the_contracts_hold() -> None:
    """What `make lint` runs: no circle between layers, no upward import."""
    lint = Path(sys.executable).with_name("lint-imports")
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_no_module_import_circle_not_even_a_type_checking_one() -> None:
    """The contracts ignore TYPE_CHECKING imports (they never run), but a circle drawn only by
    them still ties modules together for a reader: none may exist, nor one through imports
    inside functions (grimp records both)."""
    import grimp

    graph = grimp.build_graph("contextos_lab", exclude_type_checking_imports=False)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(edges.get(module, ())):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[module] = 2

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in state:
            visit(module, [module])
    assert circles == [], circles[:5]
