"""Proposal files on disk: written atomically, never overwritten, never through a link, and
each one's cited report checked by hash.

Files are written atomically (temp file, then a hard link that fails if the name exists), so a
reader never sees half a proposal and an existing id is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.tuning import ReportRef


class ProposalExists(ContextosError, FileExistsError):
    """A proposal file with that id already exists; it is never overwritten."""


class UnsafeProposalPath(ContextosError, ValueError):
    """A proposal file would land outside its folder (an id that is not one plain file name)
    or through a symbolic link (a `proposals/` pointing elsewhere): nothing is written."""


#: An id usable as a file name on its own: no separator, no `..`, no leading dot or dash.
_SAFE_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,199}\Z")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def report_ref(report: str | Path, proposals_dir: str | Path) -> ReportRef:
    """The report as a proposal cites it: path relative to the proposal's folder, and hash."""
    rel = os.path.relpath(Path(report).resolve(), Path(proposals_dir).resolve())
    return ReportRef(path=rel, sha256=sha256_file(report))


def report_matches(proposal_file: str | Path) -> bool:
    """True when the HTML a proposal file cites exists and still has the recorded hash."""
    data = json.loads(Path(proposal_file).read_text(encoding="utf-8"))
    ref = data.get("report") or {}
    target = Path(proposal_file).parent / ref.get("path", "")
    return bool(ref) and target.is_file() and sha256_file(target) == ref.get("sha256")


def write_new(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically; refuse (ProposalExists) if `path` already exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, path)  # atomic, and fails instead of replacing an existing file
        except FileExistsError as exc:
            raise ProposalExists(f"{path} exists; proposal ids are never overwritten") from exc
    finally:
        os.unlink(tmp)
    return path


def write_envelope(envelope: Envelope, directory: str | Path) -> Path:
    """`directory/<id>.json`, refusing an id that is not one plain file name and a directory
    reached through a symbolic link (ids are validated by their schemas, but an envelope built
    with `model_construct` skips validation; the folder check is the last line)."""
    aid = envelope.artifact_id
    if not _SAFE_ID.match(aid) or ".." in aid:
        raise UnsafeProposalPath(f"artifact id {aid!r} is not a plain file name; not written")
    folder = Path(directory)
    if folder.is_symlink():
        raise UnsafeProposalPath(
            f"{folder} is a symbolic link; proposals are not written through links "
            "(point the out dir at the real folder)"
        )
    path = folder / f"{aid}.json"
    if path.is_symlink():
        raise UnsafeProposalPath(f"{path} is a symbolic link; not followed")
    return write_new(path, envelope.model_dump_json(indent=1, by_alias=True) + "\n")
