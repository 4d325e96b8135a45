"""`pip install contextos-lab` (a wheel, not editable, no extras) runs the demo from anywhere.

The wheel is built from this checkout and installed with `--no-deps` into a fresh venv that
sees only the runtime dependency closure of `[project.dependencies]` (linked from this venv's
site-packages, nothing downloaded): no extras, no test tools, no checkout on the path. Then
`contextos-lab demo` runs from a folder outside the repository and must leave its three reports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import Distribution, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from contextos_lab.bundled import BUNDLED, REPO_ROOT
from tests.reports.html_checks import check_reviewer_html

#: not needed to build a wheel (and some are large or written by concurrent runs)
_SKIP_ANYWHERE = {"__pycache__", ".ipynb_checkpoints", "out"}  # e.g. notebooks/out (generated)
_SKIP_AT_ROOT = {".venv", ".git", "build", "out", "reports", "benchmarks", "examples", "tests"}
# caches that other test processes write while this one copies the checkout (pytest-xdist)
_SKIP_AT_ROOT |= {
    ".hypothesis",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".import_linter_cache",
}


def runtime_closure() -> dict[str, Distribution]:
    """contextos-lab's install requirements, recursively, with no extras of ours."""
    seen: dict[str, Distribution] = {}
    todo = [(r, "") for r in distribution("contextos-lab").requires or []]
    while todo:
        raw, extra = todo.pop()
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        for wanted in ("", *sorted(req.extras)):
            key = f"{name}[{wanted}]"
            if key in seen:
                continue
            dist = distribution(req.name)
            seen[key] = dist
            todo += [(r, wanted) for r in dist.requires or []]
    return {canonicalize_name(d.metadata["Name"]): d for d in seen.values()}


def link_closure(dists: dict[str, Distribution], deps: Path, prefix: Path) -> None:
    """Symlink each distribution's files: site-packages entries into `deps`, data files
    (`share/jupyter/...`: nbconvert templates, the kernel spec) into the venv `prefix`."""
    site = Path(sysconfig.get_paths()["purelib"])
    up = Path(os.path.relpath(sys.prefix, site))  # ../../.. from site-packages to the prefix
    for name, dist in dists.items():
        assert dist.files is not None, f"{name}: no RECORD, cannot tell its files"
        for f in dist.files:
            rel = Path(f)
            if rel.parts[0] != "..":
                target = deps / rel.parts[0]
                if rel.parts[0] != "__pycache__" and not target.exists():
                    target.symlink_to(site / rel.parts[0])
                continue
            inside = rel.relative_to(up)
            if inside.parts[0] != "share":
                continue  # console scripts point at this venv's python
            target = prefix / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to((site / rel).resolve())


def build_wheel(tmp: Path) -> Path:
    """The wheel pip would install, built offline from a copy of the checkout."""
    src = tmp / "src"

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in _SKIP_ANYWHERE or n.endswith(".egg-info")}
        return skip | (_SKIP_AT_ROOT & set(names) if Path(folder) == REPO_ROOT else set())

    shutil.copytree(REPO_ROOT, src, ignore=ignore, symlinks=True)
    wheels = tmp / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(wheels), str(src)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = wheels.glob("contextos_lab-*.whl")
    return wheel


def fresh_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    deps = tmp / "deps"
    deps.mkdir()
    link_closure(runtime_closure(), deps, venv)
    # a site dir of its own, so the closure's .pth files (and only those) are processed
    (site / "runtime_deps.pth").write_text(f"import site; site.addsitedir({str(deps)!r})\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return venv


@pytest.mark.notebook
def test_wheel_without_extras_runs_the_demo_outside_the_checkout(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    venv = fresh_venv(tmp_path, wheel)
    py = venv / "bin" / "python"
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CONTEXTOS"))}
    env |= {
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv),
        "CONTEXTOS_HOME": str(tmp_path / "config"),  # the demo's signing key goes here
        "CONTEXTOS_LAB_DEMO_SMOKE": "1",  # smaller budget; the same bundled files and steps
    }

    probe = (
        "import contextos_lab, importlib.util as u; print(contextos_lab.__file__); "
        "print([m for m in ('pytest', 'nbval', 'hypothesis', 'optuna_dashboard', 'psycopg') "
        "if u.find_spec(m)])"
    )
    where, extras = subprocess.check_output([str(py), "-c", probe], cwd=work, env=env,
                                            text=True).splitlines()  # fmt: skip
    assert Path(where).is_relative_to(venv), f"contextos_lab imported from {where}"
    assert extras == "[]", f"extras or test tools visible in the no-extras venv: {extras}"
    for name in BUNDLED:
        assert (Path(where).parent / name).is_dir(), f"{name}/ is not in the wheel"

    done = subprocess.run(
        [str(venv / "bin" / "contextos-lab"), "demo", "--out", "demo", "--no-progress"],
        cwd=work, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run_dir = next((work / "demo" / "reports").iterdir())
    check_reviewer_html(run_dir / "01_failure_clusters.html", min_images=1, summary=False)
    check_reviewer_html(run_dir / "02_autotune_sweep.html", min_images=2)
    check_reviewer_html(run_dir / "03_heldout_gate.html", min_images=1)
    assert list((work / "demo" / "proposals").glob("*.json")), done.stdout
