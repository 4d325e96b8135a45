"""Execute a notebook with papermill and render it to HTML with nbconvert.

Reports land in `<out>/reports/<run_id>/<name>.ipynb|.html`. The HTML is self-contained (figures
are embedded), so its SHA-256 pins exactly what a reviewer saw. When a notebook fails, the
partial executed notebook is kept beside where the report would be, and `NotebookFailed` says
where it is and which cell failed.

The HTML is the *reviewer's* view: no code cells, no stderr output (progress frames, warnings),
tables scroll instead of being cut. The executed `.ipynb` beside it keeps everything (code,
stderr) for a researcher. Kernels talk to papermill over Unix-domain sockets (`IPCKernelManager`),
so no "Kernel is running over TCP without encryption" warning reaches the terminal.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from contextos_lab.bundled import REPO_ROOT as REPO_ROOT  # re-exported: tests and callers
from contextos_lab.bundled import bundled_dir
from contextos_lab.errors import EXIT_NOTEBOOK, ContextosError

NOTEBOOKS = bundled_dir("notebooks")
KERNEL = "python3"


class IPCKernelManager(AsyncKernelManager):
    """A local kernel over Unix-domain sockets in the (owner-only) Jupyter runtime folder.

    ipykernel warns on every start that TCP carries code and outputs in plain text; on one
    machine IPC is the transport that warning asks for, and it needs no ports.
    """

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    @default("ip")
    def _default_ip(self) -> str:
        from jupyter_core.paths import jupyter_runtime_dir

        folder = Path(jupyter_runtime_dir())
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return str(folder / f"kernel-{os.getpid()}-{os.urandom(4).hex()}-ipc")


class NotebookFailed(ContextosError, RuntimeError):
    """A notebook raised; `partial` is the executed notebook up to the failing cell, `ename`
    the class name of what the cell raised (None when the kernel itself failed)."""

    exit_code = EXIT_NOTEBOOK

    def __init__(
        self, notebook: str, partial: Path, detail: str, ename: str | None = None
    ) -> None:
        self.notebook, self.partial, self.detail, self.ename = notebook, partial, detail, ename
        super().__init__(
            f"notebook {notebook} failed: {detail}\n  partial executed notebook kept at {partial}"
        )


@dataclass(frozen=True)
class RenderedReport:
    notebook: Path
    html: Path
    sha256: str


def report_dir(out_dir: str | Path, run_id: str) -> Path:
    return Path(out_dir) / "reports" / run_id


def execute(
    name: str,
    parameters: Mapping[str, Any],
    output: Path,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    progress: bool = False,
) -> Path:
    """Run the bundled `notebooks/<name>.ipynb` headless into `output`; NotebookFailed on any error.

    The kernel runs in `cwd`, by default the caller's working directory (so relative paths
    and command records land where the user works), and can import what the caller can
    (`user_modules.caller_import_env`). Spec paths resolve against the spec's folder.
    """
    import papermill as pm

    from contextos_lab.harness.user_modules import caller_import_env

    env = {**caller_import_env(), **(env or {})}
    cwd = cwd if cwd is not None else Path.cwd()

    source = NOTEBOOKS / f"{name}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    # papermill warns about every parameter comment it cannot type-parse; not the user's concern
    logging.getLogger("papermill").setLevel(logging.ERROR)
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        pm.execute_notebook(
            str(source),
            str(output),
            parameters=dict(parameters),
            kernel_name=KERNEL,
            cwd=str(cwd),
            progress_bar=progress,
            log_output=False,
            kernel_manager_class=IPCKernelManager,
            # the executed notebook is already written: stop the kernel without the interrupt
            # a graceful shutdown sends first (it logs "KeyboardInterrupt caught in kernel")
            shutdown_kernel="immediate",
        )
    except pm.PapermillExecutionError as exc:
        detail = f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
        raise NotebookFailed(name, output, detail, exc.ename) from exc
    except Exception as exc:  # kernel death, missing kernel, bad parameters
        raise NotebookFailed(name, output, f"{type(exc).__name__}: {exc}") from exc
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return output


#: Reviewer-view CSS: wide or long tables scroll inside their output instead of being cut.
_REVIEW_CSS = """<style>
.jp-OutputArea-output.jp-RenderedHTMLCommon { max-height: 42em; overflow: auto; }
.jp-RenderedHTMLCommon table { font-size: 12px; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { white-space: nowrap; }
.jp-RenderedMarkdown td, .jp-RenderedMarkdown th { white-space: normal; }
</style>
"""


def reviewer_view(nb: Any) -> Any:
    """The notebook as a reviewer reads it: stderr streams (progress frames, warnings) and
    error outputs dropped. Code is dropped by the exporter (`exclude_input`)."""
    import copy

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        cell["outputs"] = [
            o
            for o in cell.get("outputs", [])
            if not (o.get("output_type") == "stream" and o.get("name") == "stderr")
            and o.get("output_type") != "error"
        ]
    return nb


def to_html(notebook: Path, html: Path | None = None) -> RenderedReport:
    """Render an executed notebook to one self-contained HTML file (atomically)."""
    import nbformat
    from nbconvert import HTMLExporter

    from contextos_lab.proposals.files.emit import sha256_file

    html = html or notebook.with_suffix(".html")
    nb = reviewer_view(nbformat.read(str(notebook), as_version=4))
    exporter = HTMLExporter()
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    body = body.replace("</head>", _REVIEW_CSS + "</head>", 1)
    fd, tmp = tempfile.mkstemp(dir=html.parent, prefix=f".{html.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)
    os.chmod(tmp, 0o644)
    os.replace(tmp, html)
    return RenderedReport(notebook=notebook, html=html, sha256=sha256_file(html))


def run_report(
    name: str,
    parameters: Mapping[str, Any],
    out_dir: str | Path,
    run_id: str,
    *,
    env: Mapping[str, str] | None = None,
    progress: bool = False,
) -> RenderedReport:
    """Execute `name` into `<out>/reports/<run_id>/` and render it; the HTML is the report."""
    folder = report_dir(out_dir, run_id)
    executed = execute(name, parameters, folder / f"{name}.ipynb", env=env, progress=progress)
    return to_html(executed)
