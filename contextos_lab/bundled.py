"""Where the bundled notebooks, specs and replay sets are, installed or in a checkout.

The repository root holds them (`notebooks/`, `specs/`, `search_sets/`, `heldout/`: the one
source of truth); `setup.py` maps each into the wheel as `contextos_lab/<name>/`, so
`pip install contextos-lab` (no checkout, no extras) runs the demo. An editable install or a
checkout has no such folder inside the package and reads the repository's.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

#: The source checkout this module sits in (meaningful only for a checkout or editable install).
REPO_ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ("notebooks", "specs", "search_sets", "heldout")


def bundled_dir(name: str) -> Path:
    """The folder `name` (one of BUNDLED): inside the installed package, else the checkout's."""
    if name not in BUNDLED:
        raise ValueError(f"{name!r} is not bundled (one of {', '.join(BUNDLED)})")
    installed = Path(str(files("contextos_lab").joinpath(name)))
    if installed.is_dir():
        return installed
    return REPO_ROOT / name
