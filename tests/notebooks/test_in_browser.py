"""Every notebook as a researcher runs it: JupyterLab 4 in headless Chromium, Run All (issue 40).
Checks what the page and JupyterLab's model show: no error and no stderr output, no trace text
typeset as MathJax, every `##` section with code shows output, every figure titled with labelled
axes. One server and one browser for all notebooks (tests/notebooks/browser.py); 02, 03 and 05
on the gate toy project, the others on their defaults.

Needs Debian's Chromium (`.ci/run` installs it) and Playwright (the `dev` extra): skips with a
message where either is missing, except under CI=true, where that fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.notebooks.browser import NOTEBOOKS, Lab, missing, small_parameters

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the browser test cannot run: {reason}")
        pytest.skip(f"the browser test cannot run: {reason}")
    from tests.gate.gate_toy import write_project

    work = tmp_path_factory.mktemp("browser")
    spec = write_project(work / "toy", tunable_surfaces=["top_k"], n_trials=8)
    with Lab(work, small_parameters(work / "state", spec)) as running:
        yield running


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_run_all_in_jupyterlab_shows_no_error_stderr_mathjax_empty_section_or_bare_figure(
    lab: Lab, name: str
) -> None:
    run = lab.run(name)
    assert run.flaws() == {}


def test_the_checks_see_each_flaw_in_a_notebook_that_has_them(lab: Lab, tmp_path: Path) -> None:
    """The negative control: a page where every check has something to find."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = {
        "## stderr": 'import sys\nprint("careful", file=sys.stderr)',
        "## nothing shown": "x = 1",
        "## dollars": 'from IPython.display import HTML\nHTML("costs $255 and then $305")',
        "## bare figure": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
        "## error": "1 / 0",
    }
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    for title, code in cells.items():
        nb.cells += [new_markdown_cell(title), new_code_cell(code)]
    nbformat.write(nb, tmp_path / "flawed.ipynb")
    flaws = lab.run("flawed.ipynb", tmp_path / "flawed.ipynb").flaws()
    assert flaws.pop("errors") == ["ZeroDivisionError: division by zero"]
    assert flaws.pop("stderr") == ["careful\n"]
    assert "costs" in flaws.pop("typeset as MathJax (trace text must show as text)")[0]
    assert flaws.pop("sections with code that show nothing") == ["## nothing shown"]
    assert flaws.pop("figures without a title or axis labels") == [[""]]
    assert flaws == {}
