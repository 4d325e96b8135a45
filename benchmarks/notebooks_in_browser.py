"""The five notebooks as a researcher runs them: Run All from `notebooks/` (where JupyterLab
starts kernels), twice, and once with a prerequisite missing; `papermill --help-notebook` on each.

Driver: a Jupyter kernel through nbclient (papermill), started in `notebooks/` exactly as
JupyterLab starts it, with the kernel's outputs read back as JupyterLab renders them (error,
stream, display data). No browser drives it here: Chromium is not installed on the CI machine
and a JupyterLab+Chromium run of five notebooks twice does not fit CI's time, so the script is a
benchmark, and the fast checks (parameters, prerequisites, path rule, idempotent enqueue) are
in tests/notebooks and tests/autotune/study. Small settings keep it under ~10 minutes: the gate
toy project (tests/gate/gate_toy.py) for 02, 03 and 05; notebook 01 and 04 on their defaults.

Goals (issues 40 and 43) written to benchmarks/results/notebooks_in_browser.json:
notebooks_tested >= 5, missing_prerequisite_tracebacks == 0, rerun_changes_outputs == 0,
promised_not_shown == 0, ledgers_used == 1, papermill_parameters_unparsed_or_untyped == 0,
notebooks_with_errors == 0, notebooks_with_stderr == 0, empty_sections_default_params == 0,
figures_without_axis_labels == 0.

    nice -n 10 .venv/bin/python benchmarks/notebooks_in_browser.py
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
import papermill

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
OUT = REPO / "benchmarks" / "results" / "notebooks_in_browser.json"
sys.path.insert(0, str(REPO))

# Injected into the executed copy only (the committed notebooks define nothing): every figure
# drawn must have a title and axis labels.
HOOK = """
import matplotlib.backend_bases as _bb
_unlabelled = []
_print_figure = _bb.FigureCanvasBase.print_figure
def _checked(self, *args, **kwargs):
    fig = self.figure
    axes = [a for a in fig.axes if a.get_visible() and a.has_data()]
    titled = bool(fig._suptitle and fig._suptitle.get_text()) or any(a.get_title() for a in axes)
    labelled = all(a.get_xlabel() and (a.get_ylabel() or a.get_yticklabels()) for a in axes)
    if axes and not (titled and labelled):
        _unlabelled.append(1)
    return _print_figure(self, *args, **kwargs)
_bb.FigureCanvasBase.print_figure = _checked
"""
REPORT = 'print("__UNLABELLED__", len(_unlabelled))'
VOLATILE = re.compile(r"T_[0-9a-f]{5}|0x[0-9a-f]+|\d+(\.\d+)? ?(s|ms)\b")


def _prepared(name: str, folder: Path) -> Path:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(HOOK))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    path = folder / name
    nbformat.write(nb, path)
    return path


def _run(path: Path, out: Path, parameters: dict[str, Any]) -> tuple[dict, bool]:
    try:
        papermill.execute_notebook(
            str(path), str(out), parameters=parameters, kernel_name="python3",
            cwd=str(NOTEBOOKS), progress_bar=False,
        )  # fmt: skip
        failed = False
    except papermill.PapermillExecutionError:
        failed = True
    return json.loads(out.read_text(encoding="utf-8")), failed


def _outputs(nb: dict) -> list[dict]:
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def _text(o: dict) -> str:
    if o["output_type"] == "stream":
        return "".join(o["text"])
    if o["output_type"] == "error":
        return "\n".join(o["traceback"])
    data = o.get("data", {})
    # what JupyterLab renders: the richest representation only (a text/plain fallback such as
    # a datetime's repr is not on screen when there is HTML)
    for mime in ("text/html", "image/png", "text/markdown", "text/plain"):
        if mime in data:
            value = data[mime]
            return "".join(value) if isinstance(value, list) else str(value)
    return ""


def _shown(nb: dict) -> list[str]:
    """Each code cell's outputs as one text (stream chunks merge on screen), volatile parts
    (Styler ids, addresses, durations) removed."""
    return [
        VOLATILE.sub("", "".join(_text(o) for o in c.get("outputs", [])))
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


def _empty_sections(nb: dict) -> int:
    """`##` sections with code whose cells show nothing (prose-only sections are not empty)."""
    empty, has_code, shown = 0, False, False
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and source.startswith("## "):
            empty += has_code and not shown
            has_code, shown = False, False
        elif cell["cell_type"] == "code":
            has_code = True
            shown = shown or bool(cell.get("outputs"))
    return empty + (has_code and not shown)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def main() -> None:
    from tests.gate.gate_toy import write_project

    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="nb_browser_"))
    spec = write_project(tmp / "toy", tunable_surfaces=["top_k"], n_trials=8)
    ledger_rel = f".contextos/bench_notebooks_{os.getpid()}.jsonl"  # relative: the rule decides
    os.environ["CONTEXTOS_HELDOUT_LEDGER"] = ledger_rel
    state = tmp / "state"
    runs: dict[str, dict[str, Any]] = {
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
    missing = {
        "01_failure_clusters.ipynb": {"sources": ["no/such/traces.json"]},
        "02_autotune_sweep.ipynb": {"spec_path": "no/such/spec.yaml"},
        "03_heldout_gate.ipynb": {"spec_path": str(spec), "out_dir": str(tmp / "no_study")},
        "04_strategy_replay.ipynb": {"project": "no/such/project"},
        "05_outside_proposers.ipynb": {"spec_path": "no/such/spec.yaml"},
    }
    (tmp / "no_study").mkdir()
    rows, goals = (
        [],
        dict.fromkeys(
            ("errors", "stderr", "empty", "unlabelled", "tracebacks", "rerun", "promised"), 0
        ),
    )
    for name, params in runs.items():
        prepared = _prepared(name, tmp)
        first, failed1 = _run(prepared, tmp / f"1_{name}", params)
        before = _files(state) if state.exists() else {}
        second, failed2 = _run(prepared, tmp / f"2_{name}", params)
        after = _files(state)
        outs = _outputs(first)
        errors = failed1 or failed2
        stderr = sum(o.get("name") == "stderr" for o in outs)
        empty = _empty_sections(first)
        unlabelled = sum(
            int(m.group(1)) for o in outs for m in re.finditer(r"__UNLABELLED__ (\d+)", _text(o))
        )
        changed_outputs = _shown(first) != _shown(second)
        sources = ["".join(c["source"])[:60] for c in first["cells"] if c["cell_type"] == "code"]
        changed_cells = [
            src for src, a, b in zip(sources, _shown(first), _shown(second), strict=False) if a != b
        ]
        written = sorted(k for k in after if before.get(k) != after[k])
        rerun = changed_outputs or bool(written)
        shown = "\n".join(_text(o) for o in outs)
        promised = 0
        if name.startswith("05"):  # the outside proposal gated, or the reason it is not
            promised = int(
                not re.search(r"outside proposal trial_\d+ by reference-proposer:", shown)
            )
        _, failed = _run(_prepared(name, tmp), tmp / f"m_{name}", missing[name])
        errs = [
            o
            for o in _outputs(json.loads((tmp / f"m_{name}").read_text()))
            if o["output_type"] == "error"
        ]
        traceback = not failed or not errs or len(errs[0]["traceback"]) != 1
        goals["errors"] += errors
        goals["stderr"] += stderr > 0
        goals["empty"] += empty
        goals["unlabelled"] += unlabelled
        goals["tracebacks"] += traceback
        goals["rerun"] += rerun
        goals["promised"] += promised
        message = errs[0]["traceback"][-1][:160] if errs else None
        rows.append(
            {
                "notebook": name,
                "errors": errors,
                "stderr_outputs": stderr,
                "empty_sections": empty,
                "figures_unlabelled": unlabelled,
                "rerun_changed_outputs": changed_outputs,
                "rerun_changed_cells": changed_cells,
                "rerun_files_written": written[:8],
                "missing_input_message": message,
                "missing_input_traceback": traceback,
            }
        )
        print(
            f"{name:28} errors {errors!s:5} stderr {stderr} empty {empty} unlabelled "
            f"{unlabelled} rerun-changed {changed_outputs!s:5} files {len(written)} "
            f"traceback {traceback}",
            flush=True,
        )

    # one ledger: the gate from the notebook (kernel in notebooks/) and the CLI (from the root)
    cli_out = tmp / "cli_out"  # a copy of the study, not yet gated there: the CLI reads
    cli_out.mkdir()
    (cli_out / "study.db").write_bytes((state / "o23" / "study.db").read_bytes())
    cli = [sys.executable, "-m", "contextos_lab.cli", "gate", "--spec", str(spec), "--out",
           str(cli_out)]  # fmt: skip
    subprocess.run(
        cli, cwd=REPO, check=False, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    ledgers = [p for p in (REPO / ledger_rel, NOTEBOOKS / ledger_rel) if p.exists()]
    ledgers_used = len(ledgers)
    for p in ledgers:
        p.unlink()

    unparsed = 0
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
        body = ast.parse("".join(cell["source"])).body
        assigned = [n.target for n in body if isinstance(n, ast.AnnAssign)]
        assigned += [t for n in body if isinstance(n, ast.Assign) for t in n.targets]
        listed = papermill.inspect_notebook(str(path))
        for target in assigned:
            about = listed.get(getattr(target, "id", ""))
            untyped = about is None or about["inferred_type_name"] in ("None", "")
            unparsed += untyped or not about["help"]

    def goal(name: str, want: str, measured: int, met: bool) -> tuple[str, dict[str, Any]]:
        return name, {"goal": want, "measured": measured, "met": met}

    result = {
        "goals": dict(
            [
                goal("notebooks_tested", ">= 5", len(rows), len(rows) >= 5),
                goal(
                    "missing_prerequisite_tracebacks",
                    "== 0",
                    goals["tracebacks"],
                    goals["tracebacks"] == 0,
                ),
                goal("rerun_changes_outputs", "== 0", goals["rerun"], goals["rerun"] == 0),
                goal("promised_not_shown", "== 0", goals["promised"], goals["promised"] == 0),
                goal("ledgers_used", "== 1", ledgers_used, ledgers_used == 1),
                goal("papermill_parameters_unparsed_or_untyped", "== 0", unparsed, unparsed == 0),
                goal("notebooks_with_errors", "== 0", goals["errors"], goals["errors"] == 0),
                goal("notebooks_with_stderr", "== 0", goals["stderr"], goals["stderr"] == 0),
                goal("empty_sections_default_params", "== 0", goals["empty"], goals["empty"] == 0),
                goal(
                    "figures_without_axis_labels",
                    "== 0",
                    goals["unlabelled"],
                    goals["unlabelled"] == 0,
                ),
            ]
        ),
        "driver": "nbclient kernel started in notebooks/ (as JupyterLab does); no browser",
        "notebooks": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"\n{'goal':42} {'measured':>8}  met")
    for k, v in result["goals"].items():
        print(f"{k:42} {v['measured']:>8}  {v['met']}")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    # a kernel client thread papermill leaves behind kept the interpreter alive after the
    # results were written (seen: 15 minutes); everything is on disk by now
    os._exit(0)
