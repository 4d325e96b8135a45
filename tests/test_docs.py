"""The documentation site builds with `mkdocs build --strict` (issue 40): every nav entry
exists, every link resolves, the API reference and the generated pages (benchmark tables,
notebooks) render. A broken page fails `make test`, not only `make docs`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextos_lab.bundled import REPO_ROOT

pytest.importorskip("mkdocs", reason="the [docs] extra (in [dev]) is not installed")


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = tmp_path / "site"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "GoldensTarget" in api and "load_insights" in api  # names table and docstrings
    results = (site / "benchmarks" / "results" / "index.html").read_text(encoding="utf-8")
    assert "cli_latency" in results and "help_median_s" in results
    assert (site / "notebooks" / "01_failure_clusters" / "index.html").is_file()


def test_the_readme_is_a_short_entry_point() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= 150, len(lines)
    assert "make demo" in lines[2] or "make demo" in "\n".join(lines[:8])
    assert "make test" in "\n".join(lines[:8])
