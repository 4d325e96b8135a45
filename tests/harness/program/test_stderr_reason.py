"""The one-line reason of a crashed program names its exception, not the runtime's banner."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.harness.program.stderr_reason import error_line

NODE_CRASH = """file:///srv/harness.mjs:41
    throw new TypeError("Cannot read properties of undefined (reading 'op')");
    ^

TypeError: Cannot read properties of undefined (reading 'op')
    at runCase (file:///srv/harness.mjs:41:11)
    at async Promise.all (index 0)

Node.js v20.20.2"""
PYTHON_CRASH = """Traceback (most recent call last):
  File "/srv/h.py", line 3, in <module>
    answer = case["expected"]
KeyError: 'expected'"""


def test_node_and_python_crashes_name_their_exception() -> None:
    assert error_line(NODE_CRASH) == "TypeError: Cannot read properties of undefined (reading 'op')"
    assert error_line(PYTHON_CRASH) == "KeyError: 'expected'"
    assert error_line("panic: runtime error: index out of range [3]").startswith("panic:")
    assert error_line('Exception in thread "main" java.lang.IllegalStateException: x').startswith(
        "Exception in thread"
    )


# One crash report per runtime, as each prints it (Node, Java, Perl, bash and mawk captured on
# this machine; Ruby 3.4, Go, Rust, .NET and PHP in their documented formats). The expected
# line is the one a harness writer needs; a warning before it must not win.
SHAPES: dict[str, tuple[str, str]] = {
    "node_plain_error": (
        '[eval]:1\nfunction f(){throw new Error("model not configured")} f()\n'
        "             ^\n\nError: model not configured\n    at f ([eval]:1:20)\n\n"
        "Node.js v20.20.2",
        "Error: model not configured",
    ),
    "node_coded_error": (
        "node:assert:408\n    throw err;\n    ^\n\nAssertionError [ERR_ASSERTION]: no seed\n"
        "    at main (/srv/h.mjs:3:1) {\n  code: 'ERR_ASSERTION'\n}\n\nNode.js v22.1.0",
        "AssertionError [ERR_ASSERTION]: no seed",
    ),
    "python_chained": (
        'Traceback (most recent call last):\n  File "/srv/h.py", line 9, in <module>\n'
        "    run()\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "RuntimeError: bad request",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    ),
    "ruby": (
        "h.rb:4:in 'Integer#/': divided by 0 (ZeroDivisionError)\n\tfrom h.rb:4:in '<main>'",
        "h.rb:4:in 'Integer#/': divided by 0 (ZeroDivisionError)",
    ),
    "ruby_namespaced": (
        "h.rb:2:in `initialize': No such file or directory @ rb_sysopen - k.txt "
        "(Errno::ENOENT)\n\tfrom h.rb:2:in `open'",
        "h.rb:2:in `initialize': No such file or directory @ rb_sysopen - k.txt (Errno::ENOENT)",
    ),
    "go_panic": (
        "starting worker\npanic: runtime error: index out of range [3] with length 3\n\n"
        "goroutine 1 [running]:\nmain.main()\n\t/srv/main.go:9 +0x1d\nexit status 2",
        "panic: runtime error: index out of range [3] with length 3",
    ),
    "go_fatal": (
        "fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:",
        "fatal error: all goroutines are asleep - deadlock!",
    ),
    "rust": (
        "thread 'main' panicked at src/main.rs:4:5:\nno model\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "thread 'main' panicked at src/main.rs:4:5:",
    ),
    "java": (
        'Exception in thread "main" java.lang.IllegalStateException: no model\n'
        "\tat H.main(H.java:1)\nCaused by: java.io.IOException: closed",
        'Exception in thread "main" java.lang.IllegalStateException: no model',
    ),
    "dotnet": (
        "Unhandled exception. System.InvalidOperationException: no model\n"
        "   at Program.Main() in /srv/Program.cs:line 5",
        "Unhandled exception. System.InvalidOperationException: no model",
    ),
    "php": (
        "PHP Fatal error:  Uncaught Exception: no model in /srv/h.php:3\nStack trace:\n#0 {main}",
        "PHP Fatal error:  Uncaught Exception: no model in /srv/h.php:3",
    ),
    "perl_die": (
        "Use of uninitialized value $t in addition (+) at h.pl line 7.\n"
        "no model configured at h.pl line 12, <STDIN> line 1.",
        "no model configured at h.pl line 12, <STDIN> line 1.",
    ),
    "perl_runtime": (
        'Can\'t call method "foo" on an undefined value at -e line 1.',
        'Can\'t call method "foo" on an undefined value at -e line 1.',
    ),
    "bash_unbound": (
        "reading batch\nh.sh: line 2: UNSET: unbound variable",
        "h.sh: line 2: UNSET: unbound variable",
    ),
    "bash_command": (
        "bash: nosuchcmd: command not found\nreading batch",
        "bash: nosuchcmd: command not found",
    ),
    "awk": (
        "awk: cannot open /srv/k.txt (No such file or directory)\nhalf a line",
        "awk: cannot open /srv/k.txt (No such file or directory)",
    ),
    "jq_in_a_shell_harness": (
        "jq: error (at <stdin>:0): Cannot index number with \"case_id\"\nh.sh: line 4: done",
        'jq: error (at <stdin>:0): Cannot index number with "case_id"',
    ),
    "gawk": (
        "gawk: h.awk:3: fatal: division by zero attempted",
        "gawk: h.awk:3: fatal: division by zero attempted",
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_runtime_crash_shape_gives_its_cause(shape: str) -> None:
    stderr, expected = SHAPES[shape]
    assert error_line(stderr) == expected


def test_a_warning_before_the_crash_does_not_hide_it() -> None:
    shell = "h.sh: line 3: warn: command not found\nh.sh: line 9: x: unbound variable"
    assert error_line(shell) == "h.sh: line 9: x: unbound variable"
    assert error_line("UserWarning: slow\nValueError: bad").startswith("ValueError")


def test_without_an_exception_line_the_last_meaningful_line() -> None:
    assert error_line("starting\nmodel not configured\nNode.js v20.1.0") == "model not configured"
    assert error_line("Node.js v20.1.0\n") == ""
    assert error_line("") == ""


@given(st.text(max_size=400))
def test_any_stderr_gives_one_bounded_line(stderr: str) -> None:
    line = error_line(stderr)
    assert "\n" not in line and "\r" not in line and len(line) <= 200
    assert not line or line in stderr
