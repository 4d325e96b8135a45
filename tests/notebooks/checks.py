"""What counts as a flaw in a notebook run, read from the notebook model JupyterLab holds after
Run All: one definition for the browser test and benchmarks/notebooks_in_browser.py (issue 40).

The figure check runs inside the kernel (a PNG says nothing about its labels): `watch_figures`
wraps matplotlib's `print_figure`, through which every inline figure is drawn, and appends one
JSON line per unlabelled figure to the file named by `$CONTEXTOS_FIGURE_LOG`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FIGURE_LOG = "CONTEXTOS_FIGURE_LOG"


def code_outputs(cells: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]


def errors(cells: Iterable[dict[str, Any]]) -> list[str]:
    """`ename: evalue` of every error output."""
    return [
        f"{o['ename']}: {o['evalue']}" for o in code_outputs(cells) if o["output_type"] == "error"
    ]


def stderr(cells: Iterable[dict[str, Any]]) -> list[str]:
    """The start of each stderr stream (a warning or a progress bar, red on the page)."""
    return [
        "".join(o["text"])[:300]
        for o in code_outputs(cells)
        if o["output_type"] == "stream" and o["name"] == "stderr"
    ]


def not_run(cells: Iterable[dict[str, Any]]) -> list[str]:
    """The start of each code cell Run All left without an execution count (a kernel that never
    started shows nothing wrong otherwise)."""
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in cells if c["cell_type"] == "code"]
    return [s[:60] for s, n in zip(sources, counts, strict=True) if s.strip() and n is None]


def empty_sections(cells: Iterable[dict[str, Any]]) -> list[str]:
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


def unlabelled(figure: Any) -> bool:
    """A matplotlib figure with drawn axes but no title (figure or axes) or an axis unlabelled
    (a y axis may be named by its tick labels instead: a bar chart of named rows)."""
    axes = [a for a in figure.axes if a.get_visible() and a.has_data()]
    suptitle = figure._suptitle  # no public getter before matplotlib 3.10's get_suptitle
    titled = bool(suptitle and suptitle.get_text()) or any(a.get_title() for a in axes)
    labelled = all(a.get_xlabel() and (a.get_ylabel() or a.get_yticklabels()) for a in axes)
    return bool(axes) and not (titled and labelled)


def watch_figures() -> None:
    """In a kernel: log each unlabelled figure drawn, with the notebook's path (the session name
    jupyter_server gives its kernels) and the figure's titles."""
    import matplotlib.backend_bases as backend

    log = os.environ.get(FIGURE_LOG)
    if not log:
        return
    draw = backend.FigureCanvasBase.print_figure

    def checked(canvas: Any, *args: Any, **kwargs: Any) -> Any:
        if unlabelled(canvas.figure):
            titles = [a.get_title() for a in canvas.figure.axes]
            line = {"notebook": os.environ.get("JPY_SESSION_NAME", ""), "titles": titles}
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
        return draw(canvas, *args, **kwargs)

    backend.FigureCanvasBase.print_figure = checked  # type: ignore[method-assign]


def unlabelled_figures(log: Path, notebook: str) -> list[list[str]]:
    """The titles of each unlabelled figure `notebook` (a path ending) drew, from the log."""
    if not log.is_file():
        return []
    lines = [json.loads(s) for s in log.read_text(encoding="utf-8").splitlines() if s]
    return [s["titles"] for s in lines if s["notebook"].endswith(notebook)]
