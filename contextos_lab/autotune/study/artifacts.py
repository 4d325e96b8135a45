"""Large study records kept in Optuna's artifact store, not in study attributes.

A study attribute is read on every `study.user_attrs` access and listed in optuna-dashboard's
study page; the search set's full case-hash list (136 KB for 2,000 cases) cluttered both. It is
uploaded once, at study creation, with `optuna.artifacts.upload_artifact` into a
`FileSystemArtifactStore` beside the storage file (`<folder of study.db or journal>/artifacts`),
which `contextos-lab dashboard` also serves. Storages without a local file (in-memory, a
PostgreSQL server) keep the list as the `search_set_case_hashes` attribute, as before: there is
no folder every reader is sure to share.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import optuna
from optuna.artifacts import FileSystemArtifactStore, download_artifact, get_all_artifact_meta

CASE_HASHES_ATTR = "search_set_case_hashes"
CASE_HASHES_FILE = "search_set_case_hashes.json"


def artifact_dir(storage_url: str) -> Path | None:
    """`<folder of the SQLite file or journal>/artifacts`, or None for server/in-memory storages."""
    from contextos_lab.autotune.study.storage import journal_path

    path = journal_path(storage_url)
    if path is None and storage_url.startswith("sqlite:///"):
        path = storage_url.removeprefix("sqlite:///")
        if path in ("", ":memory:"):
            return None
    if path is None:
        return None
    return Path(path).resolve().parent / "artifacts"


def artifact_store(storage_url: str) -> FileSystemArtifactStore | None:
    folder = artifact_dir(storage_url)
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return FileSystemArtifactStore(str(folder))


def record_case_hashes(study: optuna.Study, hashes: Sequence[str], storage_url: str | None) -> None:
    """Keep the search set's case hashes with the study: an artifact where a local folder
    exists, the study attribute otherwise."""
    store = artifact_store(storage_url) if storage_url else None
    if store is None:
        study.set_user_attr(CASE_HASHES_ATTR, list(hashes))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / CASE_HASHES_FILE
        path.write_text(json.dumps(list(hashes)), encoding="utf-8")
        optuna.artifacts.upload_artifact(
            artifact_store=store,
            file_path=str(path),
            study_or_trial=study,
            mimetype="application/json",
        )


def recorded_case_hashes(study: optuna.Study, storage_url: str | None) -> list[str]:
    """The case hashes recorded at study creation (attribute or artifact); [] if none."""
    if CASE_HASHES_ATTR in study.user_attrs:
        return list(study.user_attrs[CASE_HASHES_ATTR])
    store = artifact_store(storage_url) if storage_url else None
    if store is None:
        return []
    for meta in get_all_artifact_meta(study):
        if meta.filename == CASE_HASHES_FILE:
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / CASE_HASHES_FILE
                download_artifact(
                    artifact_store=store, file_path=str(target), artifact_id=meta.artifact_id
                )
                return list(json.loads(target.read_text(encoding="utf-8")))
    return []
