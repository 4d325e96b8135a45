"""No function in the package runs over 60 lines, so a reader sees each step whole.

A function's length is its `def` line through its last line (`end_lineno - lineno + 1`, as
`ast` reports them): decorators excluded, docstring and nested functions included (a nested
function is also measured on its own). The stages a user reads most (gate, racing and the rest
of autotune, attribution and the rest of insights, the CLI) have no exception. `ALLOWED` lists
the functions elsewhere not split yet, each with its length today: it may only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "contextos_lab"
MAX_LINES = 60
#: Stages with no allowance: every function there is at most MAX_LINES.
STRICT = ("gate/", "autotune/", "insights/", "cli/")
#: path relative to the package : qualified name -> its length when allowed (never to grow).
ALLOWED: dict[str, int] = {
    "harness/reference/core.py:run_core": 116,
    "harness/reference/generate_cases.py:draw_case": 137,
    "harness/reference/prepared.py:prepare_cases": 71,
    "harness/reference/result_frame.py:result_frame": 67,
    "harness/reference/synthetic_feedback.py:support_desk": 80,
}


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
    lengths = function_lengths()
    over = {
        name: n
        for name, n in lengths.items()
        if n > MAX_LINES and (name not in ALLOWED or n > ALLOWED[name])
    }
    assert not over, (
        f"functions over {MAX_LINES} lines (split them; an allowed one may only shrink): {over}"
    )


def test_the_allowance_only_shrinks_and_never_covers_the_strict_stages() -> None:
    lengths = function_lengths()
    strict = [name for name in ALLOWED if name.startswith(STRICT)]
    assert not strict, f"no allowance in {STRICT}: {strict}"
    stale = {
        name: lengths.get(name)
        for name, n in ALLOWED.items()
        if lengths.get(name, 0) <= MAX_LINES or lengths[name] < n
    }
    assert not stale, f"split or shrunk: lower or drop their ALLOWED entries: {stale}"


def test_the_count_is_def_line_through_last_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "@decorator\ndef f():\n    '''doc'''\n    def g():\n        pass\n    return g\n\n"
        "class C:\n    def h(self):\n        return 1\n",
        encoding="utf-8",
    )
    assert function_lengths(tmp_path) == {"m.py:f": 5, "m.py:f.g": 2, "m.py:C.h": 2}
