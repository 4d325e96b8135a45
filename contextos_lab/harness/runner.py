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
import re
import signal
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contextos_lab.memory.skeleton import skeleton

try:  # POSIX advisory lock so several processes can share one record file.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Where records go unless a path is given or CONTEXTOS_FEEDBACK_RECORD is set.
DEFAULT_RECORD_PATH = Path(".contextos/runs/feedback_record.jsonl")
RECORD_PATH_ENV = "CONTEXTOS_FEEDBACK_RECORD"

#: Seed 003's patterns, widened to the forms secrets really take. A line (or argv element)
#: matching any of them, on its raw text or on its `skeleton` (NFKC, zero-width characters
#: removed, look-alike letters mapped to Latin, so a full-width `password=` or one with a
#: zero-width space inside matches too), is replaced whole by `[redacted: <name>]`.
_PW = r"(?:pass(?:word|wd|phrase)|pwd)"
_KEY = r"(?:api[_\- ]?key|apikey|access[_-]?key(?:[_-]?id)?|private[_-]?key)"
_SECRET = (
    r"(?:\w*secret(?:[_-]\w+)?|\w*token"
    r"|credentials?)"
)
_ASSIGN = r"\w*[\"']?\s*[:=]\s*[\"']?"  # `=`, `:`, spaces and quotes, JSON and YAML alike
_ASSIGN_EXACT = r"\b[\"']?\s*[:=]\s*[\"']?"  # the key ends here (`tokens: 100` is no key)
REDACTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"^\s*Bearer ", re.IGNORECASE)),
    ("bearer", re.compile(r"\bBearer\s+\S", re.IGNORECASE)),
    ("password", re.compile(r"password=", re.IGNORECASE)),
    ("password", re.compile(rf"\b\w*{_PW}{_ASSIGN}[^\s\"',;]", re.IGNORECASE)),
    ("api_key", re.compile(r"api[_-]?key=", re.IGNORECASE)),
    ("api_key", re.compile(rf"\b\w*{_KEY}{_ASSIGN}[^\s\"',;]", re.IGNORECASE)),
    ("secret", re.compile(rf"\b{_SECRET}{_ASSIGN_EXACT}[^\s\"',;]", re.IGNORECASE)),
    ("url_credentials", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:[^\s/@]+@", re.IGNORECASE)),
    (
        "aws_access_key",
        re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}"),
    ),
    ("aws_secret_key", re.compile(r"aws[_-]?secret", re.IGNORECASE)),
    (
        "slack_token",
        re.compile(r"xox[a-z]?[.-]|xapp-\d|hooks\.slack\.com/services/", re.IGNORECASE),
    ),
)
#: A line that ends in a key with no value (`Authorization: Bearer`, `password=`): the secret
#: is on the next line, which is redacted too.
BARE_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"\bBearer\s*$", re.IGNORECASE)),
    ("password", re.compile(rf"\w*{_PW}{_ASSIGN}\s*$", re.IGNORECASE)),
    ("api_key", re.compile(rf"\w*{_KEY}{_ASSIGN}\s*$", re.IGNORECASE)),
    ("secret", re.compile(rf"\b{_SECRET}{_ASSIGN_EXACT}\s*$", re.IGNORECASE)),
)
#: An argv flag whose value is the next element (`--password hunter2`, `--api-key K`).
SECRET_FLAG = re.compile(
    r"^-{1,2}[\w.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
    r"credentials?|auth)[\w.-]*$",
    re.IGNORECASE,
)

#: A line cut at `max_line_bytes` (before redaction) can end in the *start* of a secret whose
#: full pattern no longer matches, e.g. `AKIAIOSFODNN` of a 20-character AWS key. Rule: a cut
#: line whose kept text ends in a prefix of a match of a pattern above is replaced whole, from
#: the pattern's third character on (`Bea`, `pas`, `api`, `AKI`, `xox`; the one or two characters
#: before that are public and carry no secret). So no character of an AWS key body, a Slack
#: token or a value after `password=` / `api_key=` / `Bearer` survives a cut; a complete match
#: is caught by the patterns above as before. Names match `REDACTION_PATTERNS`.
CUT_PREFIX_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"\bBea(?:r(?:e(?:r\s*)?)?)?$", re.IGNORECASE)),
    ("password", re.compile(r"pas(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?$", re.IGNORECASE)),
    ("api_key", re.compile(r"api(?:[_-]?(?:k(?:e(?:y)?)?)?)?$", re.IGNORECASE)),
    ("aws_access_key", re.compile(r"AKI(?:A[0-9A-Z]{0,15})?$")),
    ("slack_token", re.compile(r"xox[a-z]?[.-]?\S*$")),
)

_CHUNK = 1 << 16
#: After the program exits, how long its output may keep flowing before leftovers are killed.
DRAIN_TIMEOUT_S = 5.0


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


class RunnerFailure(RuntimeError):
    """A command did not provably succeed (null or non-zero exit, or a runner error)."""

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


# --- redaction -----------------------------------------------------------------------------


def redaction_hit(text: str) -> str | None:
    """Name of the first pattern `text` matches (per line, raw or normalised), or None."""
    for line in text.split("\n"):
        for form in _forms(line):
            for name, pattern in REDACTION_PATTERNS:
                if pattern.search(form):
                    return name
    return None


def _forms(line: str) -> tuple[str, ...]:
    normal = skeleton(line)
    return (line,) if normal == line else (line, normal)


def _bare_key(line: str) -> str | None:
    for form in _forms(line):
        for name, pattern in BARE_KEY_PATTERNS:
            if pattern.search(form):
                return name
    return None


def cut_secret_hit(kept: str) -> str | None:
    """Name of the pattern whose partial match `kept` (a line cut short) ends in, or None."""
    for name, pattern in CUT_PREFIX_PATTERNS:
        if pattern.search(kept):
            return name
    return None


def redact_text(text: str) -> str:
    """Every line that matches a pattern is replaced whole, and the line after one that ends
    in a bare key (`password=`, `Bearer`); the marker matches none."""
    lines = text.split("\n")
    carry: str | None = None
    for i, line in enumerate(lines):
        name = redaction_hit(line) or carry
        carry = _bare_key(line)
        if name is not None:
            lines[i] = f"[redacted: {name}]"
    return "\n".join(lines)


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Each element redacted as text, and the element after a secret flag (`--password v`)."""
    out = []
    after_flag = False
    for arg in argv:
        flagged = after_flag
        after_flag = bool(SECRET_FLAG.match(skeleton(arg))) and "=" not in arg
        out.append("[redacted: argv_secret]" if flagged else redact_text(arg))
    return tuple(out)


# --- deterministic head + tail truncation --------------------------------------------------


def truncation_marker(dropped: int) -> str:
    return f"...truncated {dropped} lines..."


class HeadTail:
    """Keeps the first `head` and last `tail` lines of a stream, and counts the rest.

    Lines are stored as bytes and decoded only when rendered, so a long log costs O(head+tail).
    """

    def __init__(self, head: int = 20, tail: int = 80, max_line_bytes: int = 2000) -> None:
        if head < 0 or tail < 0 or max_line_bytes < 1:
            raise ValueError("head and tail must be >= 0, max_line_bytes >= 1")
        self.head, self.tail, self.max_line_bytes = head, tail, max_line_bytes
        self._head: list[bytes] = []
        self._tail: deque[bytes] = deque(maxlen=tail) if tail else deque(maxlen=0)
        self.total = 0

    def add(self, line: bytes, dropped_bytes: int = 0) -> None:
        """One complete line (without its newline); `dropped_bytes` were already cut upstream."""
        if len(line) > self.max_line_bytes:
            dropped_bytes += len(line) - self.max_line_bytes
            line = line[: self.max_line_bytes]
        if dropped_bytes:
            # the cut may have split a secret: its start alone matches no full pattern
            name = cut_secret_hit(line.decode("utf-8", errors="replace"))
            if name is not None:
                line = f"[redacted: {name}]".encode()
            line += f" ...[line cut, {dropped_bytes} more bytes]".encode()
        self.total += 1
        if len(self._head) < self.head:
            self._head.append(line)
        elif self.tail:
            self._tail.append(line)

    @property
    def dropped(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def lines(self) -> list[str]:
        kept = [b.decode("utf-8", errors="replace") for b in self._head]
        if self.dropped:
            kept.append(truncation_marker(self.dropped))
        kept.extend(b.decode("utf-8", errors="replace") for b in self._tail)
        return kept

    def render(self) -> str:
        return "\n".join(self.lines())


def truncate_lines(lines: Iterable[str], head: int = 20, tail: int = 80) -> str:
    """The record text for a sequence of lines (same rule the streaming runner applies)."""
    acc = HeadTail(head=head, tail=tail, max_line_bytes=1 << 30)
    for line in lines:
        acc.add(line.encode("utf-8"))
    return acc.render()


class _LineSplitter:
    """Bytes chunks -> complete lines, each buffered up to `max_bytes` (the excess is counted)."""

    def __init__(self, max_bytes: int, emit: Callable[[bytes, int], None]) -> None:
        self._max = max_bytes
        self._emit = emit
        self._buf = bytearray()
        self._dropped = 0
        self._open = False

    def feed(self, chunk: bytes) -> None:
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            self._take(part)
            self._flush()
        if parts[-1]:
            self._take(parts[-1])

    def close(self) -> None:
        if self._open:
            self._flush()

    def _take(self, piece: bytes) -> None:
        self._open = True
        room = self._max - len(self._buf)
        if len(piece) <= room:
            self._buf += piece
        else:
            self._buf += piece[: max(room, 0)]
            self._dropped += len(piece) - max(room, 0)

    def _flush(self) -> None:
        line = bytes(self._buf)
        if line.endswith(b"\r"):
            line = line[:-1]
        self._emit(line, self._dropped)
        self._buf.clear()
        self._dropped = 0
        self._open = False


# --- the record file: append with rotation, load ---------------------------------------------


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


def default_record_path() -> Path:
    return Path(os.environ.get(RECORD_PATH_ENV) or DEFAULT_RECORD_PATH)


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
    if not command:
        outcome.error = "empty argv"
        return outcome
    try:
        proc = subprocess.Popen(
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
        return outcome
    except PermissionError as exc:
        outcome.error = f"permission denied: {exc.filename or command[0]}"
        return outcome
    except (OSError, ValueError) as exc:
        outcome.error = f"could not start: {type(exc).__name__}: {exc}"
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
        _reader(proc.stdout, _LineSplitter(out_cap, on_out)),
        _reader(proc.stderr, _LineSplitter(limits.max_line_bytes, err.add)),
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
    if consumer_errors:
        exc = consumer_errors[0]
        note = f"stdout consumer failed: {type(exc).__name__}: {exc}"
        outcome.error = f"{outcome.error}; {note}" if outcome.error else note
    return outcome


def _reader(stream: IO[bytes], splitter: _LineSplitter) -> threading.Thread:
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
