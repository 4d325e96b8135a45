"""Proposal files stay in their folder: unsafe ids and symlinked folders are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.proposals.files.emit import UnsafeProposalPath, write_envelope
from tests.factories import decision_record


@pytest.mark.parametrize("bad_id", ["../escaped", "a/b", "/abs", "..", ".hidden", "x\n"])
def test_an_id_that_is_not_a_plain_file_name_is_refused(tmp_path: Path, bad_id: str) -> None:
    envelope = decision_record(0).model_copy(update={"record_id": bad_id})  # not validated
    folder = tmp_path / "out" / "proposals"
    with pytest.raises(UnsafeProposalPath):
        write_envelope(envelope, folder)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_a_symlinked_proposals_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "proposals").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafeProposalPath, match="symbolic link"):
        write_envelope(decision_record(0), tmp_path / "out" / "proposals")
    assert list(elsewhere.iterdir()) == []


def test_a_plain_folder_gets_the_file(tmp_path: Path) -> None:
    path = write_envelope(decision_record(0), tmp_path / "proposals")
    assert path.parent == tmp_path / "proposals" and path.name.endswith(".json")
