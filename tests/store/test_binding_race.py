"""Concurrent first writers on a new store: the binding and the rows are one transaction, so
the store ends with one project's rows only, and the writers of the other project are refused
(exit 2, naming both). Three `ingest decisions` processes (two for one project, one for the
other) pass the command's binding check together (a barrier holds each before its write), then
race; the assertions hold under every order their transactions commit in."""

from __future__ import annotations

import contextlib
import io
import multiprocessing as mp
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from sqlalchemy import func, select

from contextos_lab.cli.app import build_parser, main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.store.database import artifacts, make_engine
from contextos_lab.store.project_binding import recorded_project

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
WRITERS = (("coding_agent", CODING), ("coding_agent", CODING), ("refund_desk", BUNDLED_PROJECT))
#: Decisions each writer ingests (its project's first ones: a small file keeps the test fast).
ROWS = {"coding_agent": 12, "refund_desk": 7}


def _files(folder: Path) -> dict[str, Path]:
    out = {}
    for name, project in WRITERS:
        lines = (project / "data" / "decisions.jsonl").read_text().splitlines(keepends=True)
        out[name] = folder / f"{name}.jsonl"
        out[name].write_text("".join(lines[: ROWS[name]]))
    return out


def _ingest(url: str, project: Path, file: Path, barrier: Barrier, out: Connection) -> None:
    """One writer: the real command, held at the barrier after its binding check."""
    from contextos_lab.store.experience_store import ExperienceStore

    append_many = ExperienceStore.append_many

    def after_the_barrier(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        barrier.wait(timeout=120)
        return append_many(self, *args, **kwargs)

    ExperienceStore.append_many = after_the_barrier  # type: ignore[method-assign]
    err = io.StringIO()
    argv = ["ingest", "decisions", str(file), "--store", url]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*argv, "--project", str(project)])
    out.send((code, err.getvalue()))


def _race(url: str, folder: Path) -> None:
    files = _files(folder)
    build_parser()  # every command module imported once here, not in each forked writer
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(len(WRITERS))
    pipes = [ctx.Pipe(duplex=False) for _ in WRITERS]
    procs = [
        ctx.Process(target=_ingest, args=(url, project, files[name], barrier, send))
        for (name, project), (_, send) in zip(WRITERS, pipes, strict=True)
    ]
    for p in procs:
        p.start()
    results = [recv.recv() for recv, _ in pipes]
    for p in procs:
        p.join(timeout=120)
    bound = recorded_project(url)
    assert bound is not None and bound.name in {"coding_agent", "refund_desk"}
    for (name, _), (code, err) in zip(WRITERS, results, strict=True):
        if name == bound.name:
            assert code == 0, err
        else:  # refused, one line naming both projects
            assert code == 2 and "coding_agent" in err and "refund_desk" in err, err
            assert err.count("\n") == 1, err
    with make_engine(url, create=False).connect() as conn:
        stored = conn.execute(select(func.count()).select_from(artifacts)).scalar_one()
    assert stored == ROWS[bound.name]  # the winner's decisions, once; none of the other's
    assert main(["store", "verify", "--store", url]) == 0


def test_first_writers_of_two_projects_on_sqlite(tmp_path: Path) -> None:
    _race(f"sqlite:///{tmp_path / 'store.db'}", tmp_path)


@pytest.mark.postgres
def test_first_writers_of_two_projects_on_postgresql(postgres_db: str, tmp_path: Path) -> None:
    _race(postgres_db, tmp_path)
