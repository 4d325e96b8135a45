"""SQLite files left whole when a process (a notebook kernel) exits with engines still open.

A study or result cache in SQLite runs in WAL mode. A kernel that exits while its engines hold
connections leaves the last commits in `study.db-wal`, and whichever process opens the file
next folds them into `study.db`: a second Run All that only reads would still change the
study's bytes. Disposing every engine at exit closes the connections cleanly, so SQLite
checkpoints the log and removes `-wal` and `-shm`, and a run that only reads leaves the files
exactly as it found them. (SQLAlchemy keeps no registry of engines to dispose, hence this one.)
"""

from __future__ import annotations

import atexit
import weakref

from sqlalchemy.engine import Engine

_OPEN: weakref.WeakSet[Engine] = weakref.WeakSet()


def close_at_exit(engine: Engine) -> Engine:
    """Dispose `engine` when the interpreter exits (SQLite only; servers need nothing)."""
    if engine.url.get_backend_name() == "sqlite":
        _OPEN.add(engine)
    return engine


@atexit.register
def _dispose_all() -> None:
    for engine in list(_OPEN):
        engine.dispose()
