"""Redaction covers the forms secrets really take, on normalised text (issue 14)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.runner import redact_argv, redact_text

SECRET = "hunter2XYZ"
FORMS = [
    f"password: {SECRET}",
    f'"password": "{SECRET}"',
    f"password = {SECRET}",
    f"apikey: {SECRET}",
    f"client_secret={SECRET}",
    f"aws_secret_access_key = {SECRET}",
    f"DB_PASSWORD='{SECRET}'",
    f"access_token: {SECRET}",
    f"postgres://admin:{SECRET}@db.internal:5432/app",
    f"https://user:{SECRET}@example.com/x",
    f"xoxe-1-{SECRET}",
    f"xoxe.xoxp-1-{SECRET}",
    f"ASIA{SECRET.upper()}ABCDEF",
    f"ｐａｓｓｗｏｒｄ={SECRET}",  # full-width
    f"pass\u200bword={SECRET}",  # zero-width space inside
    f"раssword: {SECRET}",  # Cyrillic р and а
]


@pytest.mark.parametrize("line", FORMS)
def test_key_value_url_and_token_forms_are_redacted(line: str) -> None:
    out = redact_text(f"before\n{line}\nafter")
    assert SECRET not in out and SECRET.upper() not in out, out
    assert out.startswith("before\n[redacted: ") and out.endswith("\nafter")


@pytest.mark.parametrize("bare", ["Authorization: Bearer", "password=", "api_key:", "token ="])
def test_the_line_after_a_bare_key_is_redacted(bare: str) -> None:
    out = redact_text(f"{bare}\n{SECRET}\nnext")
    assert SECRET not in out and out.endswith("\nnext")


def test_argv_flag_values_are_redacted() -> None:
    argv = ["tool", "--password", SECRET, "--user", "bob", "--api-key=" + SECRET, "--token", "t"]
    out = redact_argv(argv)
    assert SECRET not in " ".join(out) and "t" not in out[7:]
    assert out[:2] == ("tool", "--password") and out[3:5] == ("--user", "bob")


@pytest.mark.parametrize("line", ["tokens: 100", "passes: 3", "the secretary: Ann", "max_tokens=5"])
def test_ordinary_lines_are_kept(line: str) -> None:
    assert redact_text(line) == line


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(["password", "Password", "API_KEY", "apikey", "client_secret", "token"]),
    sep=st.sampled_from(["=", ": ", " = ", '": "', ":"]),
    quote=st.sampled_from(["", '"', "'"]),
    before=st.text(alphabet="abc ,;{", max_size=10),
)
def test_any_separator_and_quoting_is_redacted(key: str, sep: str, quote: str, before: str) -> None:
    line = f"{before}{quote}{key}{sep}{SECRET}{quote}"
    out = redact_text(line)
    assert SECRET not in out
    assert redact_text(out) == out
