"""The one-line reason of a crashed program names its exception, not the runtime's banner."""

from __future__ import annotations

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


def test_without_an_exception_line_the_last_meaningful_line() -> None:
    assert error_line("starting\nmodel not configured\nNode.js v20.1.0") == "model not configured"
    assert error_line("Node.js v20.1.0\n") == ""
    assert error_line("") == ""


@given(st.text(max_size=400))
def test_any_stderr_gives_one_bounded_line(stderr: str) -> None:
    line = error_line(stderr)
    assert "\n" not in line and "\r" not in line and len(line) <= 200
    assert not line or line in stderr
