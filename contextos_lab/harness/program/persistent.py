"""Long-lived harness processes: start-up paid once per worker, not once per chunk.

A program that declares itself persistent (`"persistent": true` in its `--surfaces` object, or
`persistent: true` in `harness_kwargs`) is started once per concurrent worker and kept. Each
batch is one JSON line on its stdin, the request of the one-shot protocol plus `"batch": n`;
the program answers with one result line per case, then `{"batch_done": n}`, and waits for the
next line. Stdin closing means "exit". A batch that overruns its deadline, or a process that
dies, is killed and replaced on the next batch; the cases it answered keep their results.

Each batch appends one command record (argv, the batch's stdout and the stderr written while it
ran): `exit_code` 0 means `batch_done` arrived, a process that died records its exit status,
and a deadline records `timed_out` with a null exit code, as one-shot runs do.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from contextos_lab.harness.command_record import CommandRecord, RecordFile, default_record_path
from contextos_lab.harness.head_tail import HeadTail, LineSplitter
from contextos_lab.harness.program.result_lines import ResultLines
from contextos_lab.harness.program.stderr_reason import error_line
from contextos_lab.harness.redaction import redact_argv, redact_text
from contextos_lab.harness.runner import OutputLimits, new_command_id

_EOF = None
#: Stderr lines a process keeps for the batch records (older ones are already recorded).
_STDERR_KEPT = 4000


def _read_batch(
    proc: _Process,
    payload: str,
    batch: int,
    timeout: float | None,
    t0: float,
    lines: ResultLines,
    out: HeadTail,
) -> tuple[int | None, str | None, bool]:
    """Send the batch and feed its answers to `lines` until `batch_done` (exit code 0, no
    error), the process's death (its exit code) or the deadline (None, timed out)."""
    # written from a thread: a process that stops reading must not block us past the
    # deadline (a large batch fills the pipe); a dead reader shows as EOF on stdout
    threading.Thread(target=proc.send, args=(payload.encode("utf-8"),), daemon=True).start()
    deadline = None if timeout is None else t0 + timeout
    while True:
        wait = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        try:
            item = proc.stdout.get(timeout=wait)
        except queue.Empty:
            proc.kill()
            return None, f"timeout after {timeout:g}s (process group killed)", True
        if item is _EOF:
            exit_code = proc.proc.wait()
            proc.err_thread.join(1.0)
            return exit_code, f"process exited (code {exit_code}) before batch_done", False
        raw, dropped = item
        out.add(raw, dropped)
        text = raw.decode("utf-8", errors="replace")
        if _is_done(text, batch):
            return 0, None, False
        lines.feed(text)


@dataclass
class Exchange:
    """One batch on a persistent process: what came back and how it ended."""

    lines: ResultLines
    record: CommandRecord
    failure: str | None  # None: `batch_done` arrived


class _Process:
    def __init__(
        self, argv: Sequence[str], cwd: str | Path | None, env: Mapping[str, str] | None,
        limits: OutputLimits,
    ) -> None:  # fmt: skip
        self.proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
            start_new_session=True,
        )  # fmt: skip
        self.stdout: queue.Queue[tuple[bytes, int] | None] = queue.Queue()
        self.stderr: deque[tuple[int, bytes, int]] = deque(maxlen=_STDERR_KEPT)
        self.stderr_count = 0
        self.lock = threading.Lock()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        cap = limits.consumer_max_line_bytes

        def on_out(line: bytes, dropped: int) -> None:
            self.stdout.put((line, dropped))

        def on_err(line: bytes, dropped: int) -> None:
            with self.lock:
                self.stderr.append((self.stderr_count, line, dropped))
                self.stderr_count += 1

        self.out_thread = _pump(self.proc.stdout, LineSplitter(cap, on_out), self.stdout)
        self.err_thread = _pump(self.proc.stderr, LineSplitter(limits.max_line_bytes, on_err))

    def send(self, payload: bytes) -> bool:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def stderr_since(self, index: int) -> list[tuple[bytes, int]]:
        with self.lock:
            return [(line, d) for i, line, d in self.stderr if i >= index]

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.err_thread.join(1.0)

    def close(self, grace_s: float = 2.0) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.kill()


def _pump(
    stream: IO[bytes], splitter: LineSplitter, done: queue.Queue[Any] | None = None
) -> threading.Thread:
    def run() -> None:
        with stream:
            while chunk := stream.read(1 << 16):
                splitter.feed(chunk)
        splitter.close()
        if done is not None:
            done.put(_EOF)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class PersistentPool:
    """Idle processes of one command; a batch borrows one (or starts one) and gives it back."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None,
        env: Mapping[str, str] | None,
        record_file: RecordFile | str | Path | None,
        limits: OutputLimits | None,
    ) -> None:
        self.argv = tuple(str(a) for a in argv)
        self.cwd, self.env = cwd, env
        self.limits = limits or OutputLimits()
        self.sink = (
            record_file
            if isinstance(record_file, RecordFile)
            else RecordFile(Path(record_file) if record_file else default_record_path())
        )
        self._idle: list[_Process] = []
        self._lock = threading.Lock()
        self._batch = 0
        self.started = 0  # processes started so far (start-up paid this many times)
        atexit.register(self.close)

    def close(self) -> None:
        """Close every idle process (stdin EOF, then a kill after a grace period)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for p in idle:
            p.close()

    def _acquire(self) -> _Process:
        with self._lock:
            while self._idle:
                p = self._idle.pop()
                if p.proc.poll() is None:
                    return p
            self.started += 1
        return _Process(self.argv, self.cwd, self.env, self.limits)

    def _release(self, p: _Process) -> None:
        with self._lock:
            self._idle.append(p)

    def exchange(
        self,
        request: str,
        case_ids: Sequence[str],
        timeout: float | None,
        note: str,
        parent_command_id: str | None = None,
    ) -> Exchange:
        """Send one batch (`request`: the one-shot request, serialised) and read its answers
        until `batch_done`, the process's death or the deadline."""
        with self._lock:
            self._batch += 1
            batch = self._batch
        started_at, t0 = datetime.now(UTC), time.perf_counter()
        lines = ResultLines(case_ids)
        out = HeadTail(self.limits.head_lines, self.limits.tail_lines, self.limits.max_line_bytes)
        try:
            proc = self._acquire()
        except (OSError, ValueError) as exc:
            missing = getattr(exc, "filename", None)
            why = (
                f"command not found: {missing or self.argv[0]}"
                if isinstance(exc, FileNotFoundError)
                else f"could not start: {type(exc).__name__}: {exc}"
            )
            record = self._record(
                started_at, t0, None, why, False, out, [], note, parent_command_id
            )
            return Exchange(lines, record, f"harness did not run: {why}")
        err_from = proc.stderr_count
        # the request is a JSON object already serialised: add the batch number to it
        payload = request.rstrip()[:-1] + f', "batch": {batch}}}\n'
        exit_code, error, timed_out = _read_batch(proc, payload, batch, timeout, t0, lines, out)
        stderr = proc.stderr_since(err_from)
        if error is None:
            self._release(proc)
        record = self._record(
            started_at, t0, exit_code, error, timed_out, out, stderr, note, parent_command_id
        )
        failure = None
        if timed_out:
            failure = f"harness hung: {error}"
        elif error is not None:
            named = error_line(record.stderr_tail)
            failure = f"harness {error}" + (f" (stderr: {named})" if named else "")
        return Exchange(lines, record, failure)

    def _record(
        self,
        started_at: datetime,
        t0: float,
        exit_code: int | None,
        error: str | None,
        timed_out: bool,
        out: HeadTail,
        stderr: list[tuple[bytes, int]],
        note: str,
        parent: str | None,
    ) -> CommandRecord:
        err = HeadTail(self.limits.head_lines, self.limits.tail_lines, self.limits.max_line_bytes)
        for line, dropped in stderr:
            err.add(line, dropped)
        record = CommandRecord(
            command_id=new_command_id(started_at),
            parent_command_id=parent,
            command=redact_argv(self.argv),
            cwd=redact_text(str(Path(self.cwd) if self.cwd is not None else Path.cwd())),
            started_at=started_at,
            duration_ms=round((time.perf_counter() - t0) * 1000, 3),
            exit_code=exit_code,
            error=redact_text(error) if error else None,
            timed_out=timed_out,
            stdout_tail=redact_text(out.render()),
            stderr_tail=redact_text(err.render()),
            stdout_lines=out.total,
            stderr_lines=err.total,
            agent_note=redact_text(" ".join(f"[persistent] {note}".split())),
        )
        self.sink.append(record)
        return record


def _is_done(text: str, batch: int) -> bool:
    if "batch_done" not in text:
        return False
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict) and obj.get("batch_done") == batch
