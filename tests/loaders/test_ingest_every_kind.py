"""`contextos-lab ingest KIND FILE` finishes for every kind the loader knows (a kind without a
`next:` line, or with one, never ends in a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.loaders import KINDS
from tests.loaders.fixtures import write_rows
from tests.loaders.test_records import ROWS


@pytest.mark.parametrize("kind", list(KINDS))
def test_ingest_cli_finishes_for_every_kind(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_rows(tmp_path / "in.jsonl", [ROWS[kind](i) for i in range(3)], KINDS[kind])
    store = f"sqlite:///{tmp_path}/s.db"
    code = main(["ingest", kind, str(source), "--store", store, "--project", str(BUNDLED_PROJECT)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "accepted" in printed.out and "Traceback" not in printed.err
