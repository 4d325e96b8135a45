"""The feedback runner records facts: exit codes, bounded output, no secrets, rotated files."""

from __future__ import annotations

import json
import re
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contextos_lab.cli import app as cli
from contextos_lab.cli import runs as runs_commands
from contextos_lab.harness import runner
from contextos_lab.harness.runner import (
    CommandRecord,
    HeadTail,
    OutputLimits,
    RecordFile,
    RunnerFailure,
    read_records,
    redact_text,
    require_success,
    retry_chain,
    run_with_feedback,
    truncate_lines,
    truncation_marker,
)

PY = sys.executable

#: The seed's patterns exactly as written; the file on disk must never match any of them.
SEED_PATTERNS = [r"^Bearer ", r"password=", r"api[_-]?key=", r"AKIA[0-9A-Z]{16}", r"xox[baprs]-"]


def py(code: str) -> list[str]:
    return [PY, "-c", code]


@pytest.fixture
def rec(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "feedback_record.jsonl"


def assert_no_secret(text: str) -> None:
    for pattern in SEED_PATTERNS:
        assert not re.search(pattern, text, re.MULTILINE), pattern
        assert not re.search(pattern, text, re.MULTILINE | re.IGNORECASE), pattern


# --- the record ------------------------------------------------------------------------------


def test_record_holds_what_really_happened(rec: Path, tmp_path: Path) -> None:
    code = "import sys; print('out1'); print('out2'); print('boom', file=sys.stderr); sys.exit(3)"
    record = run_with_feedback(py(code), cwd=tmp_path, note="expect exit 3", record_file=rec)
    assert record.exit_code == 3 and record.error is None and not record.timed_out
    assert record.command == (PY, "-c", code)
    assert record.cwd == str(tmp_path)
    assert record.stdout_tail == "out1\nout2" and record.stdout_lines == 2
    assert record.stderr_tail == "boom"
    assert record.agent_note == "expect exit 3"
    assert record.duration_ms > 0 and record.command_id.startswith("cmd_")
    on_disk = read_records(rec)
    assert on_disk.records == [record] and on_disk.malformed == []
    fields = set(json.loads(rec.read_text().splitlines()[0]))
    assert {
        "command", "cwd", "stdout_tail", "stderr_tail", "exit_code", "duration_ms",
        "started_at", "agent_note", "command_id", "parent_command_id", "error",
    } <= fields  # fmt: skip


def test_stdin_is_delivered_and_ids_are_unique(rec: Path) -> None:
    code = "import sys; print(sys.stdin.read().upper())"
    a = run_with_feedback(py(code), stdin=b"hello", record_file=rec)
    b = run_with_feedback(py(code), stdin=b"hello", record_file=rec)
    assert a.stdout_tail == "HELLO" and a.command_id != b.command_id


def test_timeout_kills_the_group_and_records_null_exit(rec: Path) -> None:
    # the child spawns a grandchild that would keep the pipes open if only the child died; a
    # shell, not Python: its output must be written before the timeout even on a loaded
    # machine, where a Python child once took over a second to start (CI)
    argv = ["sh", "-c", "sleep 30 & echo started; sleep 30"]
    t0 = time.perf_counter()
    record = run_with_feedback(argv, timeout=3.0, record_file=rec)
    elapsed = time.perf_counter() - t0
    assert elapsed < 20, elapsed  # the child sleeps 30 s: it was killed, not waited for
    assert record.exit_code is None and record.timed_out
    assert record.error is not None and record.error.startswith("timeout after 3s")
    assert record.stdout_tail == "started"
    with pytest.raises(RunnerFailure, match="exit_code=null"):
        require_success(record)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["definitely-not-a-command-3f9a"], "command not found"),
        ([], "empty argv"),
    ],
)
def test_runner_errors_record_null_exit(rec: Path, argv: list[str], message: str) -> None:
    record = run_with_feedback(argv, record_file=rec)
    assert record.exit_code is None and message in (record.error or "")
    assert read_records(rec).records[-1].exit_code is None


def test_permission_denied_records_null_exit(rec: Path, tmp_path: Path) -> None:
    script = tmp_path / "not_executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    record = run_with_feedback([str(script)], record_file=rec)
    assert record.exit_code is None and "permission denied" in (record.error or "")


def test_require_success() -> None:
    base = dict(
        command_id="cmd_x", command=("x",), cwd="/", started_at="2026-05-01T00:00:00Z",
        duration_ms=1, stdout_tail="", stderr_tail="", stdout_lines=0, stderr_lines=0,
    )  # fmt: skip
    ok = CommandRecord(exit_code=0, **base)
    assert require_success(ok) is ok
    with pytest.raises(RunnerFailure, match="exit_code=2"):
        require_success(CommandRecord(exit_code=2, **base))
    with pytest.raises(RunnerFailure, match="exit_code=null: timeout"):
        require_success(CommandRecord(exit_code=None, error="timeout after 1s", **base))
    with pytest.raises(RunnerFailure):  # an exit code alone is not enough when the runner erred
        require_success(CommandRecord(exit_code=0, error="stdout consumer failed", **base))


def test_killed_by_signal_is_a_negative_exit(rec: Path) -> None:
    record = run_with_feedback(py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"),
                               record_file=rec)  # fmt: skip
    assert record.exit_code == -9 and not record.succeeded


# --- truncation ------------------------------------------------------------------------------


def test_truncation_marks_dropped_lines(rec: Path) -> None:
    limits = OutputLimits(head_lines=3, tail_lines=4)
    record = run_with_feedback(py("for i in range(100): print(i)"), record_file=rec, limits=limits)
    lines = record.stdout_tail.split("\n")
    assert lines == ["0", "1", "2", truncation_marker(93), "96", "97", "98", "99"]
    assert record.stdout_lines == 100


def test_fifty_megabytes_stay_bounded_and_deterministic(rec: Path) -> None:
    # 500,000 lines of 100 bytes, numbered so head and tail are checkable
    code = (
        "import sys\nw = sys.stdout.write\n"
        "for i in range(500_000): w(f'{i:09d} ' + 'x' * 89 + '\\n')\n"
        "sys.stderr.write('final error: disk full\\n')\nsys.exit(1)"
    )
    tracemalloc.start()
    try:  # how fast is a benchmark's business; here: bounded memory and exact tails
        first = run_with_feedback(py(code), record_file=rec)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    second = run_with_feedback(py(code), record_file=rec)
    assert peak < 20e6, f"peak {peak / 1e6:.1f} MB"
    assert first.stdout_lines == 500_000 and first.exit_code == 1
    assert first.stdout_tail == second.stdout_tail and first.stderr_tail == second.stderr_tail
    lines = first.stdout_tail.split("\n")
    assert lines[0].startswith("000000000 ") and lines[-1].startswith("000499999 ")
    assert truncation_marker(500_000 - 100) in lines
    assert first.stderr_tail == "final error: disk full"
    assert rec.stat().st_size < 100_000


def test_one_fifty_megabyte_line_is_cut(rec: Path) -> None:
    tracemalloc.start()
    try:
        record = run_with_feedback(py("import sys; sys.stdout.write('y' * 50_000_000)"),
                                   record_file=rec)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20e6
    assert record.stdout_lines == 1
    assert record.stdout_tail.endswith(f"...[line cut, {50_000_000 - 2000} more bytes]")


@settings(max_examples=200, deadline=None)
@given(
    # Output lines are decoded bytes, so they never hold lone surrogates (category Cs).
    lines=st.lists(
        st.text(
            alphabet=st.characters(exclude_characters="\n\r", exclude_categories=("Cs",)),
            max_size=20,
        ),
        max_size=60,
    ),
    head=st.integers(0, 10),
    tail=st.integers(0, 10),
)  # fmt: skip
def test_truncation_property(lines: list[str], head: int, tail: int) -> None:
    text = truncate_lines(lines, head, tail)
    assert text == truncate_lines(lines, head, tail)  # deterministic
    kept = text.split("\n") if lines else []
    dropped = max(len(lines) - head - tail, 0)
    if dropped:
        assert kept[min(head, len(lines))] == truncation_marker(dropped)
        assert kept[:head] == lines[:head]
        assert kept[head + 1 :] == (lines[-tail:] if tail else [])
        assert head + tail + dropped == len(lines)
    else:
        assert kept == lines


def test_head_tail_equals_streaming(rec: Path) -> None:
    # the pure helper and the streaming runner apply the same rule
    limits = OutputLimits(head_lines=5, tail_lines=5)
    record = run_with_feedback(py("for i in range(37): print(f'l{i}')"), record_file=rec,
                               limits=limits)  # fmt: skip
    assert record.stdout_tail == truncate_lines([f"l{i}" for i in range(37)], 5, 5)
    acc = HeadTail(2, 2, max_line_bytes=4)
    acc.add(b"abcdefgh")
    assert acc.render() == "abcd ...[line cut, 4 more bytes]"


# --- redaction -------------------------------------------------------------------------------

SECRETS = {
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
    "password": "db url postgres://u@h/db?password=hunter2",
    "api_key": "export API_KEY=sk-live-1234",
    "api-key": "curl -H x --data api-key=abc123",
    "apikey": "apikey=zzz",
    "aws": "found key AKIAIOSFODNN7EXAMPLE in env",
    "slack": "token xoxb-123456789012-abcdef",
    "slack_p": "xoxp-1-2-3",
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_each_pattern_is_redacted_before_the_write(rec: Path, secret: str) -> None:
    code = (
        f"import sys; print('before'); print({secret!r}); "
        f"print({secret!r}, file=sys.stderr); print('after')"
    )
    record = run_with_feedback(
        [*py(code), f"--flag={secret}"], note=f"expect {secret}", record_file=rec
    )
    assert record.stdout_tail.split("\n")[0] == "before"
    assert record.stdout_tail.split("\n")[2] == "after"
    assert "[redacted:" in record.stdout_tail and "[redacted:" in record.stderr_tail
    raw = rec.read_text(encoding="utf-8")
    assert_no_secret(raw)
    for field in ("stdout_tail", "stderr_tail", "agent_note"):
        assert_no_secret(getattr(record, field))
    assert_no_secret("\n".join(record.command))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from(list(SECRETS.values())),
            st.sampled_from(["Bearer ", "password=", "api_key=", "xoxa-", "AKIA", "=", "\n"]),
        ),
        max_size=8,
    )
)
@example(pieces=["BEARER", "\n", "db url postgres://u@h/db?password=hunter2"])  # found by CI
def test_redaction_property(pieces: list[str]) -> None:
    text = "".join(pieces)
    redacted = redact_text(text)
    assert_no_secret(redacted)
    assert_no_secret(json.dumps(redacted, ensure_ascii=False))
    assert redact_text(redacted) == redacted  # idempotent
    assert redacted.count("\n") == text.count("\n")  # line structure kept


_CUT_NOTE = re.compile(r" \.\.\.\[line cut, \d+ more bytes\]$")


def _body_windows(body: str, size: int = 4) -> list[str]:
    return [body[i : i + size] for i in range(len(body) - size + 1)]


def test_a_line_cut_inside_an_aws_key_leaves_no_part_of_it_on_disk(rec: Path) -> None:
    """Reviewer's case: the key straddles the 2000-byte cut, so only `AKIAIOSFODNN` is kept and
    the full pattern no longer matches; the cut line is redacted whole."""
    key = "AKIAIOSFODNN7EXAMPLE"
    code = f"import sys; sys.stdout.write('x'*1988+'{key}\\n'); sys.stderr.write('xoxb-123\\n')"
    record = run_with_feedback(py(code), record_file=rec, note="n")
    raw = rec.read_text(encoding="utf-8")
    assert "AKIAIOSFODNN" not in raw and "IOSF" not in raw
    assert record.stdout_tail.startswith("[redacted: aws_access_key] ...[line cut, ")
    assert record.stderr_tail == "[redacted: slack_token]"
    assert_no_secret(raw)


@settings(max_examples=300, deadline=None)
@given(
    body=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=16, max_size=16),
    before=st.text(alphabet="abcdefghij .:-=", max_size=40),
    after=st.text(alphabet="abcdefghij .:-=", max_size=40),
    cut=st.integers(min_value=-6, max_value=26),
    upstream=st.booleans(),
)
def test_no_cut_position_leaves_four_chars_of_an_aws_key_body(
    body: str, before: str, after: str, cut: int, upstream: bool
) -> None:
    line = f"{before}AKIA{body}{after}"
    limit = max(1, len(before) + cut)  # cut anywhere from just before the key to past its end
    acc = HeadTail(head=5, tail=5, max_line_bytes=limit)
    raw = line.encode()
    if upstream and len(raw) > limit:  # the streaming splitter cut it already
        acc.add(raw[:limit], dropped_bytes=len(raw) - limit)
    else:
        acc.add(raw)
    [kept] = redact_text(acc.render()).split("\n")
    text = _CUT_NOTE.sub("", kept)
    assert not [w for w in _body_windows(body) if w in text], (line, limit, kept)
    assert f"AKIA{body[0]}" not in text  # not even one character of the body after `AKIA`


@pytest.mark.parametrize(
    ("kept", "name"),
    [
        ("x" * 10 + "AKI", "aws_access_key"),
        ("x" * 10 + "AKIAIOSF", "aws_access_key"),
        ("token xoxb", "slack_token"),
        ("token xoxp-12", "slack_token"),
        ("Authorization: Bear", "bearer"),
        ("Authorization: Bearer ", "bearer"),
        ("login passwo", "password"),
        ("the api_k", "api_key"),
    ],
)
def test_cut_lines_ending_in_a_secrets_start_are_redacted(kept: str, name: str) -> None:
    acc = HeadTail(max_line_bytes=len(kept))
    acc.add(kept.encode() + b"REST_OF_SECRET_1234")
    assert acc.render() == f"[redacted: {name}] ...[line cut, 19 more bytes]"
    whole = HeadTail(max_line_bytes=1000)  # not cut: nothing to guess, the line is kept
    whole.add(b"ends in AKI")
    assert whole.render() == "ends in AKI"


# --- rotation --------------------------------------------------------------------------------


def test_rotation_across_six_files(rec: Path) -> None:
    sink = RecordFile(rec, max_bytes=4_000, keep=5)
    # each record ~1.6 KB with this output: 3 records per file; 25 records rotate 8 times
    code = "print('z' * 1000)"
    ids = [run_with_feedback(py(code), record_file=sink).command_id for _ in range(25)]
    files = [rec, *(sink.rotated(n) for n in range(1, 6))]
    assert all(f.exists() for f in files)
    assert not sink.rotated(6).exists()
    assert all(f.stat().st_size <= 4_000 for f in files)
    current = [r.command_id for r in read_records(rec).records]
    assert current == ids[-len(current) :] and 0 < len(current) < 25
    kept = [r.command_id for f in reversed(files) for r in read_records(f).records]
    assert kept == ids[-len(kept) :] and len(kept) < 25  # oldest dropped, order kept


def test_default_cap_is_one_megabyte(rec: Path) -> None:
    sink = RecordFile(rec)
    assert sink.max_bytes == 1_000_000 and sink.keep == 5
    rec.parent.mkdir(parents=True)
    rec.write_bytes(b"x" * 999_999 + b"\n")
    run_with_feedback(py("print(1)"), record_file=sink)
    assert sink.rotated(1).stat().st_size == 1_000_000
    assert len(read_records(rec).records) == 1


def test_loader_reports_malformed_lines(rec: Path) -> None:
    good = run_with_feedback(py("print(1)"), record_file=rec)
    with rec.open("a") as fh:
        fh.write("{not json\n")
        fh.write('{"command_id": "cmd_1"}\n')
        fh.write("\n")
    loaded = read_records(rec)
    assert loaded.records == [good]
    assert [m.line_no for m in loaded.malformed] == [2, 3]
    assert read_records(rec.parent / "missing.jsonl").records == []


# --- retry chains and the tail view ----------------------------------------------------------


def _retry_three_times(rec: Path) -> list[CommandRecord]:
    attempts: list[CommandRecord] = []
    parent = None
    for code in (1, 2, 0):
        record = run_with_feedback(
            py(f"import sys; print('attempt', file=sys.stderr); sys.exit({code})"),
            note=f"attempt expecting exit {code}",
            parent_command_id=parent,
            record_file=rec,
        )
        attempts.append(record)
        parent = record.command_id
    return attempts


def test_retry_chain_follows_parent_ids(rec: Path) -> None:
    attempts = _retry_three_times(rec)
    unrelated = run_with_feedback(py("pass"), record_file=rec)
    records = read_records(rec).records
    chain = retry_chain(records, attempts[-1].command_id)
    assert [r.command_id for r in chain] == [a.command_id for a in attempts]
    assert [r.exit_code for r in chain] == [1, 2, 0]
    assert retry_chain(records, unrelated.command_id) == [unrelated]
    assert retry_chain(records, "cmd_missing") == []


def test_runs_tail_highlights_latest_failure_and_chain(
    rec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attempts = _retry_three_times(rec)
    failing = run_with_feedback(py("import sys; print('fatal: x', file=sys.stderr); sys.exit(4)"),
                                parent_command_id=attempts[-1].command_id,
                                record_file=rec)  # fmt: skip
    run_with_feedback(py("pass"), record_file=rec)
    with rec.open("a") as fh:
        fh.write("garbage\n")
    assert "contextos_lab.cli.runs" in cli.COMMAND_MODULES
    assert cli.main(["runs", "tail", str(rec), "-n", "4"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "4 of 5 records"
    marked = [line for line in lines if line.startswith(">>")]
    assert len(marked) == 1 and failing.command_id in marked[0] and "exit=4" in marked[0]
    assert f"retry of {attempts[-1].command_id}" in captured.out
    assert f"latest failure: {failing.command_id} exit=4" in captured.out
    assert "retry chain (4 attempts)" in captured.out
    assert "fatal: x" in captured.out
    assert "skipped malformed record" in captured.err


def test_runs_tail_without_failures_and_missing_file(
    rec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_with_feedback(py("pass"), record_file=rec)
    text = runs_commands.render_tail(read_records(rec).records)
    assert "no failed commands" in text
    assert cli.main(["runs", "tail", str(rec.parent / "nope.jsonl")]) == 2
    assert "no record file" in capsys.readouterr().err


# --- leftovers, consumers, concurrency -------------------------------------------------------


def test_leftover_processes_holding_pipes_are_killed(
    rec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "DRAIN_TIMEOUT_S", 0.5)
    code = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); print('bye')"
    )
    t0 = time.perf_counter()
    record = run_with_feedback(py(code), record_file=rec)
    assert time.perf_counter() - t0 < 20  # the grandchild sleeps 30 s: killed, not waited for
    assert record.exit_code == 0 and record.stdout_tail == "bye"
    assert "leftover processes" in (record.error or "")
    with pytest.raises(RunnerFailure):
        require_success(record)


def test_a_failing_consumer_is_recorded_not_raised(rec: Path) -> None:
    seen: list[str] = []

    def consumer(line: str) -> None:
        seen.append(line)
        raise ValueError("cannot parse")

    record = run_with_feedback(
        py("for i in range(5): print(i)"), record_file=rec, on_stdout_line=consumer
    )
    assert seen == ["0"]  # not called again after the first failure
    assert record.stdout_lines == 5 and record.exit_code == 0
    assert record.error == "stdout consumer failed: ValueError: cannot parse"


def test_concurrent_appends_with_rotation_stay_whole(rec: Path) -> None:
    sink = RecordFile(rec, max_bytes=3_000, keep=5)
    with ThreadPoolExecutor(max_workers=8) as pool:
        done = list(pool.map(lambda i: run_with_feedback(py(f"print({i})"), record_file=sink),
                             range(24)))  # fmt: skip
    files = [rec, *(sink.rotated(n) for n in range(1, 6))]
    loads = [read_records(f) for f in files if f.exists()]
    assert all(not load.malformed for load in loads)
    on_disk = {r.command_id for load in loads for r in load.records}
    assert on_disk <= {r.command_id for r in done}
