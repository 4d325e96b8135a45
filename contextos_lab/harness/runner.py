"""The command feedback runner (seed 003): run a program, record what really happened.

Every external command the kit runs goes through `run_with_feedback`, which appends one
`CommandRecord` to a JSONL file. The record holds facts (exact argv, exit code, timing, the
head and tail of stdout/stderr), never the caller's expectation (that goes in `agent_note`).

- Output is streamed: only the first `head_lines` and the last `tail_lines` lines are kept,
  each cut at `max_line_bytes`, so a 50 MB log costs a few hundred KB. Truncation is
  deterministic: the same output always yields the same record.
- Secrets are redacted before the write (the file on disk is what an attacker reaches),
  including a secret's start left at the end of a line cut at `max_line_bytes`
  (`CUT_PREFIX_PATTERNS`).
- The file is capped (1 MB by default) and rotated to `.1` .. `.5`; readers read the current file.
- A run whose exit status is unknown (timeout, command not found, runner crash) records
  `exit_code: null` plus `error`; `require_success` refuses to call that a success.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

# The record model, file, redaction and truncation live in their own modules; they are
# re-exported here because `runner` is the seed's one entry point for callers.
from contextos_lab.harness.command_record import (
    CommandRecord,
    LoadedRecords,
    MalformedLine,
    RecordFile,
    RunnerFailure,
    first_validation_error,
    read_records,
    require_success,
    retry_chain,
)
from contextos_lab.harness.head_tail import (
    HeadTail,
    LineSplitter,
    truncate_lines,
    truncation_marker,
)
from contextos_lab.harness.record_path import (
    DEFAULT_RECORD_PATH,
    RECORD_PATH_ENV,
    default_record_path,
)
from contextos_lab.harness.redaction import (
    BARE_KEY_PATTERNS,
    CUT_PREFIX_PATTERNS,
    REDACTION_PATTERNS,
    SECRET_FLAG,
    cut_secret_hit,
    redact_argv,
    redact_text,
    redaction_hit,
)

__all__ = [
    "BARE_KEY_PATTERNS",
    "CUT_PREFIX_PATTERNS",
    "DEFAULT_RECORD_PATH",
    "DRAIN_TIMEOUT_S",
    "RECORD_PATH_ENV",
    "REDACTION_PATTERNS",
    "SECRET_FLAG",
    "CommandRecord",
    "HeadTail",
    "LoadedRecords",
    "MalformedLine",
    "OutputLimits",
    "RecordFile",
    "RunnerFailure",
    "cut_secret_hit",
    "default_record_path",
    "first_validation_error",
    "new_command_id",
    "read_records",
    "redact_argv",
    "redact_text",
    "redaction_hit",
    "require_success",
    "retry_chain",
    "run_with_feedback",
    "truncate_lines",
    "truncation_marker",
]  # fmt: skip

_CHUNK = 1 << 16
#: After the program exits, how long its output may keep flowing before leftovers are killed.
DRAIN_TIMEOUT_S = 5.0


# --- running ---------------------------------------------------------------------------------


def new_command_id(at: datetime | None = None) -> str:
    at = at or datetime.now(UTC)
    return f"cmd_{at.strftime('%Y%m%dT%H%M%S')}_{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class OutputLimits:
    """How much of each stream a record keeps (defaults fit one agent turn)."""

    head_lines: int = 20
    tail_lines: int = 80
    max_line_bytes: int = 2000
    #: A line handed to an `on_stdout_line` consumer may be this long before it is cut.
    consumer_max_line_bytes: int = 16 << 20


def run_with_feedback(
    argv: Sequence[str],
    cwd: str | Path | None = None,
    note: str = "",
    timeout: float | None = 60.0,
    parent_command_id: str | None = None,
    *,
    record_file: RecordFile | str | Path | None = None,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    on_stdout_line: Callable[[str], None] | None = None,
    limits: OutputLimits | None = None,
) -> CommandRecord:
    """Run `argv` (no shell), append its CommandRecord, and return it.

    `timeout` kills the whole process group; the record then has `exit_code: null`,
    `timed_out: true` and `error: "timeout after Ns"`. `on_stdout_line` sees every complete
    stdout line (for callers that parse output, like the subprocess harness) while the record
    still keeps only head and tail. Never raises for a failed command: check the record
    (or call `require_success`).
    """
    limits = limits or OutputLimits()
    sink = (
        record_file
        if isinstance(record_file, RecordFile)
        else RecordFile(Path(record_file) if record_file is not None else default_record_path())
    )
    command = tuple(str(a) for a in argv)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    out = HeadTail(limits.head_lines, limits.tail_lines, limits.max_line_bytes)
    err = HeadTail(limits.head_lines, limits.tail_lines, limits.max_line_bytes)
    outcome = _execute(command, cwd, timeout, stdin, env, on_stdout_line, limits, out, err)
    record = CommandRecord(
        command_id=new_command_id(started_at),
        parent_command_id=parent_command_id,
        command=redact_argv(command),
        cwd=redact_text(str(Path(cwd) if cwd is not None else Path.cwd())),
        started_at=started_at,
        duration_ms=round((time.perf_counter() - t0) * 1000, 3),
        exit_code=outcome.exit_code,
        error=redact_text(outcome.error) if outcome.error else None,
        timed_out=outcome.timed_out,
        stdout_tail=redact_text(out.render()),
        stderr_tail=redact_text(err.render()),
        stdout_lines=out.total,
        stderr_lines=err.total,
        agent_note=redact_text(" ".join(note.split())),
    )
    sink.append(record)
    if outcome.interrupted is not None:
        raise outcome.interrupted
    return record


@dataclass
class _Outcome:
    exit_code: int | None = None
    error: str | None = None
    timed_out: bool = False
    interrupted: BaseException | None = None


def _execute(
    command: tuple[str, ...],
    cwd: str | Path | None,
    timeout: float | None,
    stdin: bytes | None,
    env: Mapping[str, str] | None,
    on_stdout_line: Callable[[str], None] | None,
    limits: OutputLimits,
    out: HeadTail,
    err: HeadTail,
) -> _Outcome:
    outcome = _Outcome()
    proc = _start(command, cwd, env, stdin, outcome)
    if proc is None:
        return outcome
    consumer_errors: list[BaseException] = []

    def on_out(line: bytes, dropped: int) -> None:
        out.add(line, dropped)
        if on_stdout_line is not None and not consumer_errors:
            try:
                on_stdout_line(line.decode("utf-8", errors="replace"))
            except Exception as exc:  # recorded below; the stream keeps draining
                consumer_errors.append(exc)

    out_cap = limits.consumer_max_line_bytes if on_stdout_line else limits.max_line_bytes
    assert proc.stdout is not None and proc.stderr is not None
    threads = [
        _reader(proc.stdout, LineSplitter(out_cap, on_out)),
        _reader(proc.stderr, LineSplitter(limits.max_line_bytes, err.add)),
    ]
    if stdin is not None:
        assert proc.stdin is not None
        threads.append(_writer(proc.stdin, stdin))
    try:
        outcome.exit_code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        outcome.timed_out = True
        outcome.error = f"timeout after {timeout:g}s (process group killed)"
    except BaseException as exc:  # KeyboardInterrupt: kill, record, then re-raise
        _kill_group(proc)
        outcome.interrupted = exc
        outcome.error = f"runner interrupted: {type(exc).__name__}"
    _drain(proc, threads, outcome)
    if consumer_errors:
        exc = consumer_errors[0]
        note = f"stdout consumer failed: {type(exc).__name__}: {exc}"
        outcome.error = f"{outcome.error}; {note}" if outcome.error else note
    return outcome


def _start(
    command: tuple[str, ...],
    cwd: str | Path | None,
    env: Mapping[str, str] | None,
    stdin: bytes | None,
    outcome: _Outcome,
) -> subprocess.Popen[bytes] | None:
    """The process in its own session (so its group can be killed), or None with the reason
    it did not start in `outcome.error`."""
    if not command:
        outcome.error = "empty argv"
        return None
    try:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        missing = exc.filename if exc.filename is not None else command[0]
        outcome.error = f"command not found: {missing}"
    except PermissionError as exc:
        outcome.error = f"permission denied: {exc.filename or command[0]}"
    except (OSError, ValueError) as exc:
        outcome.error = f"could not start: {type(exc).__name__}: {exc}"
    return None


def _drain(
    proc: subprocess.Popen[bytes], threads: list[threading.Thread], outcome: _Outcome
) -> None:
    """Let the reader threads (the first two) and the writer finish; kill what the program
    left in its session if it still holds the output pipes, and say so in `outcome.error`."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0))
    if any(t.is_alive() for t in threads[:2]):
        # the program exited but processes it left in its session still hold the pipes
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for t in threads[:2]:
            t.join(1.0)
        held = any(t.is_alive() for t in threads[:2])
        note = (
            "output pipes still held by a detached process; output may be incomplete"
            if held
            else "leftover processes held the output pipes after exit and were killed"
        )
        outcome.error = f"{outcome.error}; {note}" if outcome.error else note


def _reader(stream: IO[bytes], splitter: LineSplitter) -> threading.Thread:
    def pump() -> None:
        with stream:
            while chunk := stream.read(_CHUNK):
                splitter.feed(chunk)
        splitter.close()

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def _writer(stream: IO[bytes], data: bytes) -> threading.Thread:
    def pump() -> None:
        try:
            with stream:
                stream.write(data)
        except (BrokenPipeError, OSError):
            pass  # the program stopped reading; its exit code says the rest

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the whole session: a hung harness gets no grace, and its children go with it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
