"""The experience store on a real PostgreSQL server (tests/conftest.py starts it): concurrent
writer processes from a fresh database, one unbroken chain, `store verify` passing."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from contextos_lab.cli.app import main
from contextos_lab.store import ExperienceStore
from tests.factories import decision_record, feedback_entry

pytestmark = pytest.mark.postgres
OPERATOR = "user_finance_lead_77"
WRITERS, PER_WRITER = 4, 8


def _write(url: str, first: int, n: int) -> None:
    """One writer process: its own engine, its own records and signed feedback."""
    store = ExperienceStore(url, authorised_overriders=[OPERATOR])
    for i in range(first, first + n):
        record = decision_record(i)
        store.append(record)
        store.append(feedback_entry(i, record))


def test_concurrent_writers_keep_one_verified_chain(postgres_db: str, capsys) -> None:
    url = postgres_db.replace("postgresql+psycopg://", "postgresql://")
    spawn = mp.get_context("spawn")
    procs = [
        spawn.Process(target=_write, args=(url, w * PER_WRITER, PER_WRITER)) for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    store = ExperienceStore(url, create=False)
    assert store.count() == 2 * WRITERS * PER_WRITER
    assert store.count("feedback_entry") == WRITERS * PER_WRITER
    seqs = [row.seq for row in store.rows()]
    assert seqs == list(range(1, len(seqs) + 1))
    report = store.verify()
    assert report.ok, str(report)
    assert main(["store", "verify", "--store", url]) == 0
    assert "ok" in capsys.readouterr().out


def test_store_refuses_updates_on_postgresql(postgres_db: str) -> None:
    import sqlalchemy as sa

    store = ExperienceStore(postgres_db, authorised_overriders=[OPERATOR])
    store.append(decision_record(0))
    with store.engine.connect() as conn, pytest.raises(sa.exc.SQLAlchemyError, match="append-only"):
        conn.execute(sa.text("UPDATE artifacts SET body = '{}'"))
    assert store.verify().ok
