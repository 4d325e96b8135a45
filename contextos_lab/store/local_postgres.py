"""A throwaway PostgreSQL server under a temp folder, for tests and benchmarks.

Why not a container or a system service: `make test` must start a real server on a fresh clone
with no root-only step. The binaries come from the `pgserver` wheel (PostgreSQL 16, pinned in the
`dev` extra) or, failing that, `$CONTEXTOS_PG_BIN` or Debian's `/usr/lib/postgresql/*/bin`.
We drive `initdb`/`pg_ctl` ourselves rather than through pgserver's Python API because we want
a private TCP port and socket under our own temp folder, and a stop we control.

PostgreSQL refuses to run as root. Under root (CI) the data folder and a private copy of the
binaries are handed to the unprivileged `nobody` account and every server command runs as it.

    with LocalPostgres.start() as pg:
        url = pg.url("mydb")   # postgresql+psycopg://postgres@127.0.0.1:PORT/mydb
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextos_lab.errors import EXIT_STORAGE, ContextosError

BIN_ENV = "CONTEXTOS_PG_BIN"
UNPRIVILEGED_USER = "nobody"


class PostgresUnavailable(ContextosError, RuntimeError):
    """No PostgreSQL server binaries on this machine (install the `dev` extra)."""

    exit_code = EXIT_STORAGE


def find_bin_dir() -> Path:
    """The folder holding `initdb`, `pg_ctl` and `postgres`."""
    candidates: list[Path] = []
    if os.environ.get(BIN_ENV):
        candidates.append(Path(os.environ[BIN_ENV]))
    spec = importlib.util.find_spec("pgserver")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin")
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for c in candidates:
        if all((c / exe).is_file() for exe in ("initdb", "pg_ctl", "postgres")):
            return c
    raise PostgresUnavailable(
        "no PostgreSQL server binaries: install the dev extra (pgserver) or set "
        f"{BIN_ENV} to a folder holding initdb, pg_ctl and postgres"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalPostgres:
    """One running server; `stop()` (or leaving `start()`'s context) removes everything."""

    root: Path
    bin_dir: Path
    port: int
    run_as: pwd.struct_passwd | None = None
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def url(self, database: str = "postgres", driver: str = "psycopg") -> str:
        return f"postgresql+{driver}://postgres@127.0.0.1:{self.port}/{database}"

    # -- lifecycle ------------------------------------------------------------------------
    @classmethod
    @contextlib.contextmanager
    def start(cls, settings: dict[str, str] | None = None) -> Iterator[LocalPostgres]:
        server = cls.launch(settings)
        try:
            yield server
        finally:
            server.stop()

    @classmethod
    def launch(cls, settings: dict[str, str] | None = None) -> LocalPostgres:
        """initdb + start under a new temp folder; the caller must call `stop()`."""
        bin_dir = find_bin_dir()
        root = Path(tempfile.mkdtemp(prefix="ctxpg-"))
        run_as = pwd.getpwnam(UNPRIVILEGED_USER) if os.geteuid() == 0 else None
        if run_as is not None:
            if bin_dir.parent.name == "pginstall":  # system binaries under /usr are readable
                bin_dir = _private_copy(bin_dir, root)
            for path in [root, *root.rglob("*")]:
                os.chown(path, run_as.pw_uid, run_as.pw_gid, follow_symlinks=False)
        server = cls(root, bin_dir, free_port(), run_as, dict(settings or {}))
        try:
            server._run(
                "initdb",
                "-D",
                str(server.data_dir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            )
            server.socket_dir.mkdir()
            if run_as is not None:
                os.chown(server.socket_dir, run_as.pw_uid, run_as.pw_gid)
            server._start()
        except BaseException:
            server.stop()
            raise
        return server

    def _start(self, tries: int = 3) -> None:
        """pg_ctl start on a free port. The port is free when chosen, but another process
        (a second test worker, a Jupyter kernel) may bind it before the server does; a failed
        start therefore tries again on a new port, and the last failure is raised."""
        for attempt in range(tries):
            opts = [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-k {self.socket_dir}",
                "-c max_connections=200",
            ]
            opts += [f"-c {k}={v}" for k, v in self.settings.items()]
            try:
                self._run(
                    "pg_ctl",
                    "-D",
                    str(self.data_dir),
                    "-l",
                    str(self.root / "log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    " ".join(opts),
                    "start",
                )
                return
            except RuntimeError:
                if attempt == tries - 1:
                    raise
                self.port = free_port()

    def create_database(self, name: str) -> str:
        """CREATE DATABASE `name` (a plain identifier) and return its URL."""
        import psycopg

        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name {name!r} must be letters, digits and _")
        with psycopg.connect(self.url().replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown, then immediate) and delete its folder."""
        if (self.data_dir / "postmaster.pid").exists():
            for mode in ("fast", "immediate"):
                done = self._run(
                    "pg_ctl",
                    "-D",
                    str(self.data_dir),
                    "-m",
                    mode,
                    "-w",
                    "-t",
                    "30",
                    "stop",
                    check=False,
                )
                if done.returncode == 0:
                    break
        shutil.rmtree(self.root, ignore_errors=True)

    def log_text(self) -> str:
        log = self.root / "log"
        return log.read_text(errors="replace") if log.exists() else ""

    def _run(self, exe: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, Any] = {}
        if self.run_as is not None:
            kwargs = {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid, "extra_groups": []}
        done = subprocess.run(
            [str(self.bin_dir / exe), *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
            **kwargs,
        )
        if check and done.returncode != 0:
            raise RuntimeError(
                f"{exe} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
                f"\n{self.log_text()[-2000:]}"
            )
        return done


def _private_copy(bin_dir: Path, root: Path) -> Path:
    """Copy the install (bin, lib, share, and pgserver's bundled libpq) under `root`, so the
    unprivileged account can read it whatever the permissions above the venv."""
    install = bin_dir.parent
    target = root / "pg" / install.parent.name / install.name
    for part in ("bin", "lib", "share"):
        if (install / part).is_dir():
            shutil.copytree(install / part, target / part, symlinks=True)
    libs = install.parent.parent / "pgserver.libs"  # initdb's rpath: $ORIGIN/../../../pgserver.libs
    if libs.is_dir():
        shutil.copytree(libs, root / "pg" / "pgserver.libs")
    return target / "bin"
