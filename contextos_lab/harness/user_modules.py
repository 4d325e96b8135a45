"""User code named in a spec (`harness:`, `evaluate:`) resolves relative to the spec's folder.

A new user keeps `my_harness.py` beside `spec.yaml` and writes `harness: my_harness:factory`;
no PYTHONPATH, no package. The spec's folder is put first on `sys.path` (once per process; a
spawned worker does the same when it rebuilds the spec). A program harness (a factory taking
`cwd`, like SubprocessHarness) runs in the spec's folder unless the spec says otherwise, so
`argv: [node, harness.mjs]` works from any working directory.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def add_spec_dir(base_dir: str | Path | None) -> None:
    if base_dir is None:
        return
    folder = str(Path(base_dir).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)


def with_spec_cwd(
    factory_path: str, kwargs: Mapping[str, Any], base_dir: str | Path | None
) -> dict[str, Any]:
    """`kwargs` plus `cwd=<spec folder>` when the factory takes `cwd` and none was given;
    a relative `cwd` is taken relative to the spec's folder."""
    out = dict(kwargs)
    if base_dir is None:
        return out
    if "cwd" in out and out["cwd"] is not None:
        if not Path(str(out["cwd"])).is_absolute():
            out["cwd"] = str((Path(base_dir) / str(out["cwd"])).resolve())
        return out
    module_name, _, attr = factory_path.partition(":")
    module = sys.modules.get(module_name)
    factory = getattr(module, attr, None) if module is not None else None
    if factory is None:
        import importlib

        try:
            factory = getattr(importlib.import_module(module_name), attr, None)
        except Exception:
            return out  # load_harness reports the import problem
    try:
        takes_cwd = factory is not None and "cwd" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_cwd = False
    if takes_cwd:
        out["cwd"] = str(Path(base_dir).resolve())
    return out


def caller_import_env() -> dict[str, str]:
    """`PYTHONPATH` for a child kernel: what this process can import, it can import.

    `sweep` runs its notebooks in the caller's working directory; a harness importable under
    `search` (in-process) must be importable there too, so the caller's own source folders
    (its cwd and non-site entries of `sys.path`) go first on the child's path.
    """
    import os
    import sysconfig

    skip = {
        str(Path(p).resolve()) for p in sysconfig.get_paths().values() if p and Path(p).exists()
    }
    dirs: list[str] = []
    for entry in [os.getcwd(), *sys.path]:
        path = Path(entry or os.getcwd()).resolve()
        text = str(path)
        if (
            text in dirs
            or not path.is_dir()
            or text in skip
            or "site-packages" in text
            or "dist-packages" in text
            or text.startswith(str(Path(sys.base_prefix).resolve()))
        ):
            continue
        dirs.append(text)
    existing = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*dirs, *([existing] if existing else [])])}
