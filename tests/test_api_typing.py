"""`contextos_lab.api` is typed for a user's checker: every lazily loaded name is also imported
under `TYPE_CHECKING` from the module its table names, and `__all__` lists them all, the
extension points (Harness, RunResult, SubprocessHarness, Attributor, Evaluator ...) included."""

from __future__ import annotations

import ast
from pathlib import Path

import contextos_lab.api as api

SOURCE = Path(api.__file__).read_text(encoding="utf-8")


def _type_checking_imports() -> dict[str, str]:
    """public name -> "module" or "module:attribute", as the TYPE_CHECKING block imports it."""
    tree = ast.parse(SOURCE)
    block = next(
        n for n in tree.body
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"
    )  # fmt: skip
    found = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            public = alias.asname or alias.name
            found[public] = node.module + ("" if public == alias.name else f":{alias.name}")
    return found


def test_every_lazy_name_is_imported_for_type_checkers_from_its_table_s_module() -> None:
    tables = {**api.RESEARCH, **api.BUILDERS, **api.EXTENSIONS}
    assert _type_checking_imports() == tables


def test_all_lists_every_public_name_and_the_extension_points() -> None:
    tables = {*api.RESEARCH, *api.BUILDERS, *api.EXTENSIONS}
    calls = {"load_insights", "load_trials", "load_gate", "load_feedback", "load_proposals",
             "run_sweep", "read_report", "Report"}  # fmt: skip
    assert set(api.__all__) == tables | calls and len(api.__all__) == len(set(api.__all__))
    seams = {"Harness", "RunResult", "SubprocessHarness", "Attributor", "Evaluator", "Loader",
             "HarnessFailure", "ContextosError"}  # fmt: skip
    assert seams <= set(api.EXTENSIONS)
    from contextos_lab.harness.protocol import Harness
    from contextos_lab.harness.subprocess_harness import SubprocessHarness

    assert api.Harness is Harness and api.SubprocessHarness is SubprocessHarness


def test_the_package_ships_its_type_marker() -> None:
    package = Path(api.__file__).parent
    assert (package / "py.typed").is_file()
    pyproject = (package.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"py.typed"' in pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]


def test_the_type_checker_runs_in_lint_and_silences_no_module_whole() -> None:
    """`make lint` runs mypy on the package; a known debt names its module and error codes,
    never `ignore_errors` (which would hide every new error in that module too)."""
    import tomllib

    root = Path(api.__file__).parents[1]
    assert "$(BIN)/mypy" in (root / "Makefile").read_text(encoding="utf-8")
    mypy = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["packages"] == ["contextos_lab"] and mypy["warn_unused_ignores"] is True
    assert "ignore-without-code" in mypy["enable_error_code"]
    for override in mypy.get("overrides", []):
        assert not override.get("ignore_errors"), override
        modules = (
            override["module"] if isinstance(override["module"], list) else [override["module"]]
        )
        if any(m.startswith("contextos_lab") for m in modules):
            assert override["disable_error_code"], override
