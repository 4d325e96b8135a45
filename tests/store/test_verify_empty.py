"""`store verify` on a store that holds nothing: ok and exit 0, signing key or not (issue 40);
a store with rows still needs the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.store.experience_store import ExperienceStore
from tests.factories import decision_record


def test_an_empty_store_verifies_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    ExperienceStore(url, create=True)
    monkeypatch.delenv("CONTEXTOS_SIGNING_KEY")  # a machine with no key yet
    assert main(["store", "verify", "--store", url]) == 0
    out, err = capsys.readouterr()
    assert "empty store" in out and not err
    assert ExperienceStore(url, create=False).verify().verdict == "empty"


def test_a_store_with_rows_still_needs_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    ExperienceStore(url, create=True).append(decision_record())
    assert main(["store", "verify", "--store", url]) == 0
    assert "ok: 1 rows" in capsys.readouterr().out
    monkeypatch.delenv("CONTEXTOS_SIGNING_KEY")
    assert main(["store", "verify", "--store", url]) == 2
    assert "no feedback signing key" in capsys.readouterr().err
