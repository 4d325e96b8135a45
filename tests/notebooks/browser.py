"""The notebooks as a researcher runs them: JupyterLab 4 in headless Chromium, Run All (issue 40).

One JupyterLab server and one browser page serve every notebook in turn (each in its own
kernel, shut down after it), so tests/notebooks/test_in_browser.py and
benchmarks/notebooks_in_browser.py pay for start-up once. Chromium is Debian's (`chromium`,
which `.ci/run` installs); Playwright (the `dev` extra) drives it and never downloads a browser.

A notebook runs as a papermill-parameterised copy (`prepare_only`: the parameters cell plus
papermill's injected cell, nothing executed) in a scratch folder under the repository's
git-ignored `out/`: its kernel starts there, and the path rule (docs/notebooks.md, "One rule
for paths, stores and ledgers": relative paths from the nearest folder holding
`pyproject.toml`) resolves every relative path to the same file as from `notebooks/`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import papermill

from contextos_lab.bundled import REPO_ROOT
from tests.notebooks import checks

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The machine notes' flags: no background connections on a closed network, no sandbox as root.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: 03 gates the study 02 searched (the same `out_dir`): 02 runs first whatever is asked.
NEEDS = {"03_heldout_gate.ipynb": "02_autotune_sweep.ipynb"}
#: Open, Run All, read what the page shows, shut the kernel down. `mathjax:scale` awaits
#: JupyterLab's typesetter, so outputs already queued for MathJax are typeset before counting.
RUN = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  if (app.shell.currentWidget !== panel) throw new Error(`${path} is not the current widget`);
  await app.commands.execute('notebook:run-all-cells');
  await app.commands.execute('mathjax:scale', {scale: 1});
  const node = panel.content.node;
  const stderr = node.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length;
  const typeset = [...node.querySelectorAll('.jp-OutputArea mjx-container')].map(
    m => m.closest('.jp-OutputArea-output').textContent.slice(0, 300));
  const model = panel.context.model.toJSON();
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.close();
  return {model, stderr, typeset};
}"""
#: Settings for a throwaway JupyterLab: never write the notebook back, keep every cell in the
#: page (no windowing: a cell scrolled out of view is still counted), no news fetched.
SETTINGS = {
    "docmanager-extension/plugin": {"autosave": False},
    "notebook-extension/tracker": {"windowingMode": "none"},
    "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def missing() -> str | None:
    """Why the browser run cannot happen here, or None."""
    if CHROMIUM is None:
        return "no Chromium on PATH (Debian's chromium package; `.ci/run` installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (the `dev` extra)"
    return None


def small_parameters(state: Path, spec: Path) -> dict[str, dict[str, Any]]:
    """Parameters that keep a run CI-sized: the gate toy project (tests/gate/gate_toy.py) at
    `spec` for 02, 03 and 05; 01, 04 and 06 on their defaults, every output under `state`."""
    return {
        "01_failure_clusters.ipynb": {"out_dir": str(state / "o1")},
        "02_autotune_sweep.ipynb": {"spec_path": str(spec), "out_dir": str(state / "o23"),
                                    "n_trials": 8},
        "03_heldout_gate.ipynb": {"spec_path": str(spec), "out_dir": str(state / "o23"),
                                  "n_boot": 200},
        "04_strategy_replay.ipynb": {"store_url": f"sqlite:///{state}/o4.db",
                                     "bundles_dir": str(state / "o4b")},
        "05_outside_proposers.ipynb": {"spec_path": str(spec), "out_dir": str(state / "o5"),
                                       "n_trials": 8, "n_boot": 200},
    }  # fmt: skip


@dataclass
class NotebookRun:
    """One notebook's Run All: JupyterLab's model afterwards and what the page showed."""

    name: str
    cells: list[dict[str, Any]]
    rendered_stderr: int
    typeset: list[str]
    unlabelled: list[list[str]]
    seconds: float
    errors: list[str] = field(init=False)
    not_run: list[str] = field(init=False)
    stderr: list[str] = field(init=False)
    empty_sections: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.errors = checks.errors(self.cells)
        self.not_run = [] if self.errors else checks.not_run(self.cells)  # an error stops Run All
        self.stderr = checks.stderr(self.cells)
        if self.rendered_stderr and not self.stderr:  # on the page, not in the model
            self.stderr = [f"{self.rendered_stderr} stderr output(s) rendered"]
        self.empty_sections = checks.empty_sections(self.cells)

    def flaws(self) -> dict[str, list[Any]]:
        """Each check that found something, with what it found."""
        found = {
            "errors": self.errors,
            "cells Run All did not run": self.not_run,
            "stderr": self.stderr,
            "typeset as MathJax (trace text must show as text)": self.typeset,
            "sections with code that show nothing": self.empty_sections,
            "figures without a title or axis labels": self.unlabelled,
        }
        return {k: v for k, v in found.items() if v}


class Lab:
    """JupyterLab on a loopback port (the repository its root) and one Chromium page on it."""

    def __init__(self, work: Path, parameters: dict[str, dict[str, Any]]) -> None:
        self.work, self.parameters = work, parameters
        self.runs: dict[str, NotebookRun] = {}
        self.figure_log = work / "figures.jsonl"

    def __enter__(self) -> Lab:
        from playwright.sync_api import sync_playwright

        (REPO_ROOT / "out").mkdir(exist_ok=True)
        self.copies = Path(tempfile.mkdtemp(prefix="notebooks-in-browser-", dir=REPO_ROOT / "out"))
        try:
            self.url = self._start_server()
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            self.page = self.browser.new_page(viewport={"width": 1400, "height": 900})
            self.page.set_default_timeout(600_000)  # a busy 2-core machine loads JupyterLab slowly
            self.page.goto(f"{self.url}/lab", wait_until="commit")
            self.page.wait_for_function("() => !!window.jupyterapp", polling=200)
            self.page.evaluate("async () => { await window.jupyterapp.restored; }")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def run(self, name: str, source: Path | None = None) -> NotebookRun:
        """Run All on notebook `name` of `notebooks/` (or at `source`), once: later calls return
        the same run."""
        if name in self.runs:
            return self.runs[name]
        if name in NEEDS:
            self.run(NEEDS[name])
        copy = self.copies / name
        papermill.execute_notebook(
            str(source or REPO_ROOT / "notebooks" / name), str(copy),
            parameters=self.parameters.get(name, {}), prepare_only=True, kernel_name="python3",
        )  # fmt: skip
        started = time.perf_counter()
        shown = self.page.evaluate(RUN, str(copy.relative_to(REPO_ROOT)))
        self.runs[name] = NotebookRun(
            name=name,
            cells=shown["model"]["cells"],
            rendered_stderr=shown["stderr"],
            typeset=shown["typeset"],
            unlabelled=checks.unlabelled_figures(self.figure_log, str(copy.relative_to(REPO_ROOT))),
            seconds=round(time.perf_counter() - started, 1),
        )
        return self.runs[name]

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if hasattr(self, "browser"):
            self.browser.close()
        if hasattr(self, "playwright"):
            self.playwright.stop()
        if hasattr(self, "server"):
            self.server.terminate()
            try:
                self.server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.server.kill()
        shutil.rmtree(self.copies, ignore_errors=True)

    def _start_server(self) -> str:
        settings = self.work / "settings" / "@jupyterlab"
        for plugin, values in SETTINGS.items():
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        startup = self.work / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)  # every kernel logs its unlabelled figures (checks.py)
        (startup / "00_figures.py").write_text(
            "from tests.notebooks.checks import watch_figures\nwatch_figures()\n"
        )
        env = {
            **os.environ,
            "JUPYTERLAB_SETTINGS_DIR": str(self.work / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.work / "workspaces"),
            "IPYTHONDIR": str(self.work / "ipython"),
            "PYTHONPATH": str(REPO_ROOT),
            checks.FIGURE_LOG: str(self.figure_log),
            "CONTEXTOS_HELDOUT_LEDGER": str(self.work / "heldout_ledger.jsonl"),
        }
        port = _free_port()
        log = self.work / "lab.log"
        self.server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
             "--ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
             "--allow-root", f"--ServerApp.root_dir={REPO_ROOT}",
             "--LabApp.expose_app_in_browser=True",
             f"--FileCheckpoints.checkpoint_dir={self.work / 'checkpoints'}"],
            env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"),
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        for _ in range(1200):  # until the server answers (it says nothing before it listens)
            if self.server.poll() is not None:
                break
            try:
                urllib.request.urlopen(f"{url}/api", timeout=2)
                return url
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer: {log.read_text()[-2000:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
