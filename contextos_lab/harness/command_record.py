"""The feedback record (seed 003): one `CommandRecord` per command, appended to a bounded JSONL
file (1 MB, rotated to `.1`..`.5`) that several processes share, and read back tolerantly."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contextos_lab.errors import EXIT_HARNESS, ContextosError
from contextos_lab.harness.record_path import default_record_path

try:  # POSIX advisory lock so several processes can share one record file.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class CommandRecord(BaseModel):
    """One line of the feedback record: what a command really did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command_id: str
    parent_command_id: str | None = None
    command: tuple[str, ...] = Field(description="exact argv (no shell), secrets redacted")
    cwd: str
    started_at: datetime
    duration_ms: float = Field(ge=0)
    exit_code: int | None = Field(
        description="process exit status; negative = killed by that signal; null = unknown"
    )
    error: str | None = Field(default=None, description="why the exit status is unknown")
    timed_out: bool = False
    stdout_tail: str = Field(description="head + `...truncated N lines...` + tail")
    stderr_tail: str
    stdout_lines: int = Field(ge=0, description="lines the process wrote to stdout")
    stderr_lines: int = Field(ge=0)
    agent_note: str = Field(default="", description="what the caller expected, one line")

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0 and self.error is None


class RunnerFailure(ContextosError, RuntimeError):
    """A command did not provably succeed (null or non-zero exit, or a runner error)."""

    exit_code = EXIT_HARNESS

    def __init__(self, record: CommandRecord) -> None:
        self.record = record
        status = "null" if record.exit_code is None else str(record.exit_code)
        detail = f": {record.error}" if record.error else ""
        super().__init__(f"command {record.command_id} exit_code={status}{detail}")


def require_success(record: CommandRecord) -> CommandRecord:
    """The refuse-on-null gate: no exit code (or a non-zero one) is never progress."""
    if not record.succeeded:
        raise RunnerFailure(record)
    return record


@dataclass(frozen=True)
class RecordFile:
    """Where records go and how the file is bounded (1 MB, `.1`..`.5`, older dropped)."""

    path: Path = field(default_factory=lambda: default_record_path())
    max_bytes: int = 1_000_000
    keep: int = 5

    def rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    def append(self, record: CommandRecord) -> None:
        line = (record.model_dump_json() + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.path):
            size = self.path.stat().st_size if self.path.exists() else 0
            if size and size + len(line) > self.max_bytes:
                self._rotate()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    def _rotate(self) -> None:
        self.rotated(self.keep).unlink(missing_ok=True)
        for n in range(self.keep - 1, 0, -1):
            if self.rotated(n).exists():
                os.replace(self.rotated(n), self.rotated(n + 1))
        os.replace(self.path, self.rotated(1))


_THREAD_LOCK = threading.Lock()


class _file_lock:
    """Thread lock + POSIX flock on `<file>.lock`, so rotation and append never interleave."""

    def __init__(self, path: Path) -> None:
        self._lock_path = path.with_name(path.name + ".lock")
        self._fd: int | None = None

    def __enter__(self) -> None:
        _THREAD_LOCK.acquire()
        if fcntl is not None:
            self._fd = os.open(self._lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        _THREAD_LOCK.release()


@dataclass(frozen=True)
class MalformedLine:
    line_no: int
    message: str


@dataclass(frozen=True)
class LoadedRecords:
    records: list[CommandRecord]
    malformed: list[MalformedLine]


def read_records(path: str | Path | None = None) -> LoadedRecords:
    """Records of the current file only (bounded by rotation); bad lines are reported, not fatal."""
    path = Path(path) if path is not None else default_record_path()
    records: list[CommandRecord] = []
    malformed: list[MalformedLine] = []
    if not path.exists():
        return LoadedRecords(records, malformed)
    with path.open(encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                records.append(CommandRecord.model_validate_json(raw))
            except ValidationError as exc:
                malformed.append(MalformedLine(no, first_validation_error(exc)))
    return LoadedRecords(records, malformed)


def first_validation_error(exc: ValidationError) -> str:
    """One line for a report: where the first problem is and what it is."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def retry_chain(records: Sequence[CommandRecord], command_id: str) -> list[CommandRecord]:
    """The attempts that led to `command_id`, first attempt first (stops at a missing parent)."""
    by_id = {r.command_id: r for r in records}
    chain: list[CommandRecord] = []
    seen: set[str] = set()
    current = by_id.get(command_id)
    while current is not None and current.command_id not in seen:
        seen.add(current.command_id)
        chain.append(current)
        parent = current.parent_command_id
        current = by_id.get(parent) if parent else None
    return chain[::-1]
