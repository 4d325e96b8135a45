"""No function in the package runs over 60 lines, so a reader sees each step whole.

A function's length is its `def` line through its last line (`end_lineno - lineno + 1`, as
`ast` reports them): decorators excluded, docstring and nested functions included (a nested
function is also measured on its own). There is no allowance: split a function that grows past
the limit into named steps.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "contextos_lab"
MAX_LINES = 60


def function_lengths(root: Path = PACKAGE) -> dict[str, int]:
    """`path:Class.function` -> its length, for every function and method under `root`."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, where: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                assert child.end_lineno is not None
                out[f"{where}:{name}"] = child.end_lineno - child.lineno + 1
                walk(child, where, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, where, prefix + child.name + ".")
            else:
                walk(child, where, prefix)

    for path in sorted(root.rglob("*.py")):
        walk(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(root).as_posix(), "")
    return out


def test_no_function_runs_over_the_limit() -> None:
    over = {name: n for name, n in function_lengths().items() if n > MAX_LINES}
    assert not over, f"functions over {MAX_LINES} lines (split them into named steps): {over}"


def test_the_count_is_def_line_through_last_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "@decorator\ndef f():\n    '''doc'''\n    def g():\n        pass\n    return g\n\n"
        "class C:\n    def h(self):\n        return 1\n",
        encoding="utf-8",
    )
    assert function_lengths(tmp_path) == {"m.py:f": 5, "m.py:f.g": 2, "m.py:C.h": 2}
