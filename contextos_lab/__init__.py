"""contextos-lab: turn operator corrections and failed runs into typed, evidence-bound proposals.

The notebook API (`import contextos_lab as cl`)::

    cl.load_insights("out/demo/01_failure_clusters")   # DataFrame, one row per insight
    cl.load_trials("out/demo")                         # every trial of the run's study
    cl.load_gate("out/demo")                           # gate table: candidate x metric
    cl.load_feedback("out/demo/data/feedback.jsonl")   # or an experience store URL
    cl.load_proposals("out/demo")                      # every proposal file, flattened
    cl.run_sweep("my_run.yaml", "out/sweep")
    cl.read_report("out/demo")                         # the newest gate report, inline

Attributes load on first use (PEP 562), so the CLI's `import contextos_lab` stays cheap.
"""

from __future__ import annotations

import warnings
from typing import Any

# Optuna imports `tqdm.auto`, which in a Jupyter kernel without ipywidgets warns "IProgress not
# found" on stderr (a red box in JupyterLab) although no widget bar is ever shown: the bars this
# kit draws pick a text bar there (autotune.study.run). Only that message is silenced.
warnings.filterwarnings("ignore", message="IProgress not found")

__version__ = "0.1.0"

_API = (
    "load_feedback",
    "load_gate",
    "load_insights",
    "load_proposals",
    "load_trials",
    "read_report",
    "run_sweep",
)
__all__ = ["UserError", "__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from contextos_lab import api

        return getattr(api, name)
    if name == "UserError":
        from contextos_lab.errors import UserError

        return UserError
    raise AttributeError(f"module 'contextos_lab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
