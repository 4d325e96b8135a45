"""One rule for the paths, stores and ledgers a notebook is given, and one way to say what is
missing.

The rule: a relative path in a notebook's parameters is relative to the repository root (the
nearest folder up from the kernel's working directory holding `pyproject.toml`; the working
directory itself when there is none), an absolute one is taken as it is. JupyterLab starts
kernels in `notebooks/`, papermill and the CLI in the root: without one rule the same
parameter named two files, and notebook 03's held-out ledger was not the one the CLI spends
(`gate` resolves against the folder it is started from: the root, as the docs run it).

A missing input is a `MissingPrerequisite` (errors.py): one line naming the path and what to
run, shown by IPython without a traceback, still an error for papermill and Run All.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from contextos_lab.errors import MissingPrerequisite
from contextos_lab.gate.heldout import ledger as heldout_ledger
from contextos_lab.gate.study_front import load_study

__all__ = [
    "MissingPrerequisite",
    "ledger_path",
    "repo_root",
    "require",
    "require_study",
    "resolve",
    "resolve_sources",
    "store_url",
]


def repo_root(start: Path | None = None) -> Path:
    """The nearest folder up from `start` (the working directory) holding `pyproject.toml`."""
    here = (start or Path.cwd()).resolve()
    return next((p for p in (here, *here.parents) if (p / "pyproject.toml").is_file()), here)


def resolve(value: str | Path, root: Path | None = None) -> Path:
    """`value` against the repository root (absolute paths and `~` as they are)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else (root or repo_root()) / path


def require(value: str | Path, what: str, run: str, root: Path | None = None) -> Path:
    """`value` resolved; a MissingPrerequisite naming it and what to `run` when it is absent."""
    path = resolve(value, root)
    if not path.exists():
        raise MissingPrerequisite(f"no {what} at {path}: {run}")
    return path


def resolve_sources(sources: str | Sequence[str], root: Path | None = None) -> list[str]:
    """Trace sources: generators (`synthetic...`) as given, files and folders resolved and
    required to exist (a missing one is named, not loaded as zero runs)."""
    given = [sources] if isinstance(sources, str | Path) else list(sources)
    return [
        str(s)
        if str(s).startswith("synthetic")
        else str(require(s, "trace source", "point `sources` at a file or folder", root))
        for s in given
    ]


def store_url(url: str, root: Path | None = None) -> str:
    """A `sqlite:///relative` store or study URL made absolute against the root; others as they
    are (a server URL, `memory`, an absolute file)."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.removeprefix(prefix).startswith(("/", ":memory:")):
        return prefix + str(resolve(url.removeprefix(prefix), root))
    return url


def ledger_path(value: str | Path | None, root: Path | None = None) -> Path:
    """The held-out ledger: `value`, else `$CONTEXTOS_HELDOUT_LEDGER`, else the default, each
    relative to the root, so a notebook and `contextos-lab gate` run from the root spend one
    ledger and one error budget."""
    chosen = value or os.environ.get(heldout_ledger.LEDGER_ENV) or heldout_ledger.DEFAULT_LEDGER
    return resolve(chosen, root)


def require_study(storage: str, name: str) -> None:
    """The study must exist before a gate runs on it (notebooks 03 and 05): a StudyNotFound
    (one line in a notebook; `contextos-lab gate` maps its name to exit status 8)."""
    load_study(name, storage)


def round_signing_key(folder: Path) -> tuple[bytes, str]:
    """(key, where from) for a notebook's own store in `folder`: the configured key, else one
    kept beside that store (made on the first run), so a second Run All verifies and dedupes
    what the first signed instead of failing or signing anew."""
    from contextos_lab.store.signing import load_signing_key

    configured = load_signing_key(required=False)
    if configured is not None:
        return configured, "the configured signing key"
    kept = folder / ".signing.key"
    if not kept.is_file():
        import secrets

        folder.mkdir(parents=True, exist_ok=True)
        kept.write_text(secrets.token_hex(32) + "\n", encoding="utf-8")
        kept.chmod(0o600)
    return kept.read_bytes().strip(), f"a key kept for this folder's store ({kept})"
