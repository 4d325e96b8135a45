"""Ship the bundled data the demo reads inside the wheel, without a second copy in the repo.

`notebooks/`, `specs/`, `search_sets/` and `heldout/` stay at the repository root (the one source
of truth, where notebooks are edited and the README points); `package_dir` maps each to a data
subpackage `contextos_lab.<name>`, so a non-editable install carries them and
`contextos_lab.bundled` finds them beside the code. pyproject.toml cannot map a folder outside the
package while still discovering the package tree, hence this file; everything else is there.
"""

from setuptools import find_namespace_packages, setup

BUNDLED = ("notebooks", "specs", "search_sets", "heldout")

setup(
    packages=[
        # namespace discovery (as pyproject's `packages.find` did): data-only folders count
        *find_namespace_packages(
            include=["contextos_lab", "contextos_lab.*"], exclude=["*.__pycache__"]
        ),
        *(f"contextos_lab.{name}" for name in BUNDLED),
    ],
    package_dir={f"contextos_lab.{name}": name for name in BUNDLED},
)
