"""Every committed notebook is thin and clean: a `parameters` cell, no outputs, no defs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    assert any("parameters" in c["metadata"].get("tags", []) for c in cells), "no parameters cell"
    for cell in cells:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            assert not cell["outputs"] and cell["execution_count"] is None, "outputs committed"
            defines = re.search(r"^\s*(async\s+def|def|class)\s", source, flags=re.MULTILINE)
            assert defines is None, "logic belongs in the package"
