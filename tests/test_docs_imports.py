"""The docs' examples import only the stable surface (issue 40): `contextos_lab.api`, the
package's own lazy names (`import contextos_lab as cl`) and the documented test kit
`contextos_lab.testing`; every name they import or call resolves. An example that reaches into
a module that may move would break a user's script the day it moves."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from contextos_lab.bundled import REPO_ROOT

#: The modules a documented example may import from.
STABLE = ("contextos_lab.api", "contextos_lab.testing", "contextos_lab")
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
PAGES = sorted((REPO_ROOT / "docs").rglob("*.md"))


def _examples(page: Path) -> list[ast.Module]:
    """The page's python blocks that parse (a block of fragments is prose, not an example)."""
    trees = []
    for block in BLOCK.findall(page.read_text(encoding="utf-8")):
        try:
            trees.append(ast.parse(block))
        except SyntaxError:
            continue
    return trees


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT / "docs")))
def test_examples_import_only_the_stable_api(page: Path) -> None:
    for tree in _examples(page):
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("contextos_lab"):
                assert node.module in STABLE, f"{page.name}: from {node.module} import ..."
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{page.name}: {node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("contextos_lab"):
                        assert alias.name in STABLE, f"{page.name}: import {alias.name}"
                        aliases[alias.asname or alias.name] = importlib.import_module(alias.name)
        for node in ast.walk(tree):  # `cl.load_trials(...)`: the attribute exists
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                module = aliases[node.value.id]
                assert hasattr(module, node.attr), f"{page.name}: {node.value.id}.{node.attr}"
