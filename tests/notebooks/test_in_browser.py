"""Notebook 01 as a researcher runs it: JupyterLab 4 in headless Chromium, Run All on its default
parameters (issue 40). Checks what only a browser shows, on the page JupyterLab renders: no error
and no stderr output, no trace text typeset as MathJax, and every `##` section with code shows
output.

Needs Chromium (Debian's `chromium` package: `apt-get install chromium`) and the `browser` extra
(Playwright, from pip, driving that Chromium: it downloads no browser of its own). Skips with a
message where either is missing, CI included: Chromium does not come from pip, so CI's own
scripts cannot install it (benchmarks/notebooks_in_browser.py checks the same notebooks through
a Jupyter kernel without a browser, everywhere).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextos_lab.bundled import REPO_ROOT

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: As the machine's notes advise: no background connections on a closed network, no sandbox as root.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOTEBOOK = "notebooks/01_failure_clusters.ipynb"
#: Run All, awaited in the page: resolves once every cell has run (JupyterLab's own command).
RUN_ALL = """async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await panel.sessionContext.ready;
  await app.commands.execute('notebook:run-all-cells');
  return panel.context.model.toJSON();
}"""
#: The start of each output that MathJax typeset (`$255 ... $305` in trace text read as TeX).
TYPESET = """() => [...document.querySelectorAll('.jp-OutputArea mjx-container')].map(
  m => m.closest('.jp-OutputArea-output').textContent.slice(0, 300))"""
READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.sessionContext && w.sessionContext.session
            && w.sessionContext.session.kernel);
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """JupyterLab on a loopback port, the repository its root (kernels start in `notebooks/`),
    autosave off so the committed notebook is never written."""
    if CHROMIUM is None:
        pytest.skip("no Chromium here (Debian's chromium package): the browser test cannot run")
    pytest.importorskip("playwright", reason="the [browser] extra (Playwright) is not installed")
    settings = tmp_path / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
         f"--ServerApp.root_dir={REPO_ROOT}", "--LabApp.expose_app_in_browser=True",
         f"--FileCheckpoints.checkpoint_dir={tmp_path / 'checkpoints'}"],  # not in notebooks/
        env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "lab.log").open("w"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):  # until the server answers (it says nothing before it listens)
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited: {(tmp_path / 'lab.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/api", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_notebook_01_runs_all_in_jupyterlab_without_errors_stderr_or_mathjax(lab: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(600_000)  # a busy 2-core machine: JupyterLab loads slowly
        page.goto(f"{lab}/lab/tree/{NOTEBOOK}", wait_until="commit")
        page.wait_for_function(READY, polling=500)
        model = page.evaluate(RUN_ALL)
        page.wait_for_timeout(1000)  # let the last outputs render
        rendered_stderr = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        ).count()
        mathjax = page.evaluate(TYPESET)
        browser.close()
    outputs = [o for c in model["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o["output_type"] == "error"]
    stderr = [o for o in outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    assert not errors, [e["ename"] + ": " + e["evalue"] for e in errors]
    assert not stderr and rendered_stderr == 0, [o["text"][:300] for o in stderr]
    assert mathjax == [], f"outputs typeset as MathJax (trace text must show as text): {mathjax}"
    assert _empty_sections(model["cells"]) == [], "sections with code that show nothing"


def _empty_sections(cells: list[dict]) -> list[str]:
    """`##` sections whose code cells show nothing (prose-only sections are not empty)."""
    empty, title, has_code, shown = [], "(top)", False, False
    for cell in [*cells, {"cell_type": "markdown", "source": "## (end)"}]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and source.startswith("## "):
            if has_code and not shown:
                empty.append(title)
            title, has_code, shown = source.splitlines()[0], False, False
        elif cell["cell_type"] == "code":
            has_code = True
            shown = shown or bool(cell.get("outputs"))
    return empty
