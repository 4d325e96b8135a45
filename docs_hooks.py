"""MkDocs hooks: pages generated at build time from what the repository holds.

- `benchmarks/results.md`: each `benchmarks/results/*.json` as a table of its goals (goal,
  measured, met) and its other top-level figures, so the docs never copy a number by hand.
- `<!-- names: TABLE -->` in a page: the `contextos_lab.api` table of that name (read from the
  source, not imported), so the API reference lists every stable name and where it lives.
- `notebooks/NAME.md`: each notebook rendered with its outputs. Notebooks are committed without
  outputs, so the executed copy `make demo` leaves in `out/*/reports/<run>/NAME.ipynb` (the
  newest; or `$CONTEXTOS_DOCS_EXECUTED/NAME.ipynb`) is rendered when there is one, else the
  committed notebook without outputs, saying how to get them. nbconvert's HTML (figures as
  data URIs) is embedded as is: offline and fast, no execution at build time.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "benchmarks/results.md", content=benchmark_tables()))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = f"notebooks/{notebook.stem}.md"
        files.append(File.generated(config, page, content=notebook_page(notebook)))
    return files


def _cell(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def benchmark_tables() -> str:
    out = [
        "# Benchmark results",
        "",
        "Generated from `benchmarks/results/*.json` at build time: each benchmark's goals "
        "(the names its issue gives) and the figures it wrote. Re-run a benchmark "
        "(`python benchmarks/NAME.py`) to refresh its table.",
        "",
    ]
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            out += [f"## {path.stem}", "", f"`{path.name}` is not JSON: {exc}", ""]
            continue
        out += [f"## {path.stem}", "", f"From `benchmarks/results/{path.name}`.", ""]
        goals = data.get("goals") if isinstance(data, dict) else None
        if isinstance(goals, dict) and goals:
            out += ["| goal | target | measured | met |", "|---|---|---|---|"]
            for name, g in goals.items():
                g = g if isinstance(g, dict) else {"measured": g}
                met = {True: "yes", False: "**no**"}.get(g.get("met"), "")
                out.append(
                    f"| `{name}` | {_cell(g.get('goal', ''))} | {_cell(g.get('measured', ''))} "
                    f"| {met} |"
                )
            out.append("")
        scalars = {
            k: v
            for k, v in (data.items() if isinstance(data, dict) else [])
            if k != "goals" and isinstance(v, (int, float, str, bool)) and len(str(v)) < 120
        }
        if scalars:
            out += ["| figure | value |", "|---|---|"]
            out += [f"| `{k}` | {_cell(v)} |" for k, v in scalars.items()]
            out.append("")
    return "\n".join(out) + "\n"


def executed_copy(name: str) -> Path | None:
    explicit = os.environ.get("CONTEXTOS_DOCS_EXECUTED")
    if explicit:
        path = Path(explicit) / f"{name}.ipynb"
        return path if path.is_file() else None
    found = list((ROOT / "out").glob(f"*/reports/*/{name}.ipynb"))
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def notebook_page(notebook: Path) -> str:
    import nbformat
    from nbconvert import HTMLExporter

    executed = executed_copy(notebook.stem)
    source = executed or notebook
    exporter = HTMLExporter(template_name="basic")
    body, _ = exporter.from_notebook_node(nbformat.read(source, as_version=4))
    where = (
        f"Rendered with its outputs from `{executed.relative_to(ROOT)}` (an executed copy)."
        if executed and executed.is_relative_to(ROOT)
        else "Rendered with its outputs from an executed copy."
        if executed
        else "Rendered without outputs: the repository keeps notebooks output-free. Run "
        "`make demo` (it executes notebooks 01-03 into `out/demo/reports/`) and build the "
        "docs again to see them with their outputs."
    )
    return (
        f"# {notebook.stem}\n\n`notebooks/{notebook.name}`. {where}\n\n"
        f'<div class="rendered-notebook">\n{body}\n</div>\n'
    )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return re.sub(r"<!-- names: (\w+) -->", lambda m: api_names(m.group(1)), markdown)


def api_names(table: str) -> str:
    """`contextos_lab.api.<table>` (name -> "module[:attribute]") as a Markdown table."""
    tree = ast.parse((ROOT / "contextos_lab" / "api.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == table
        ):
            names = ast.literal_eval(node.value)
            rows = ["| name | defined in |", "|---|---|"]
            for name, target in names.items():
                module, _, attribute = target.partition(":")
                where = f"`{module}.{attribute}`" if attribute else f"`{module}`"
                rows.append(f"| `{name}` | {where} |")
            return "\n".join(rows) + "\n"
    raise ValueError(f"contextos_lab/api.py has no table {table}")
