"""The command layer: `contextos-lab` (app.main), its conventions, and one module per command
group, named for what it drives (cli/gate.py runs `contextos-lab gate`). Sits above every stage.
"""

from contextos_lab.cli.app import main

__all__ = [
    "app",
    "autotune",
    "bundle",
    "cases",
    "common",
    "conventions",
    "dashboard",
    "demo",
    "enqueue",
    "gate",
    "goldens",
    "heldout",
    "insights",
    "loaders",
    "loop",
    "main",
    "monitor",
    "next_steps",
    "preferences",
    "project",
    "project_check",
    "project_init",
    "project_option",
    "proposals",
    "registry",
    "release",
    "runs",
    "schemas",
    "store",
    "sweep",
]
