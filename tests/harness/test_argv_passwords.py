"""CLI passwords after a short flag, by the program's manual and by the value's shape."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.argv_passwords import looks_like_password, password_spans
from contextos_lab.harness.redaction import redact_argv

PW = "Xk92jfLp!q7"


@pytest.mark.parametrize(
    "argv",
    [
        ("sshpass", "-p", PW, "ssh", "h"),
        ("sshpass", f"-p{PW}", "ssh", "h"),
        ("docker", "login", "-u", "u", "-p", PW),
        ("mysql", "-uroot", f"-p{PW}", "db"),
        ("htpasswd", "-b", ".htpasswd", "bob", PW),
        ("openssl", "enc", "-pass", f"pass:{PW}"),
        ("curl", "-u", f"bob:{PW}", "https://x"),
        ("wget", f"--password={PW}", "https://x"),
        ("psql", f"postgresql://bob:{PW}@db/app"),
        ("redis-cli", "-a", PW),
        ("mongo", "-u", "bob", "-p", PW),
        ("smbclient", "//h/s", "-U", f"bob%{PW}"),
        ("ldapsearch", "-w", PW),
        ("sqlcmd", "-U", "sa", "-P", PW),
        ("lftp", "-u", f"bob,{PW}", "sftp://h"),
        ("sqlplus", f"scott/{PW}@db"),
        ("xfreerdp", "/u:bob", f"/p:{PW}"),
        ("net", "use", "Z:", r"\\h\s", "/user:bob", PW),
        ("sometool", "-P", PW),  # not in the table: the value's shape
    ],
)
def test_the_password_is_redacted(argv: tuple[str, ...]) -> None:
    assert PW not in "\n".join(redact_argv(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ("ssh", "-p", "2222", "bob@h"),
        ("mkdir", "-p", "/tmp/a/b"),
        ("grep", "-w", "Pattern", "app.log"),
        ("pytest", "-k", "test_refund_flow", "-p", "no:cacheprovider"),
        ("docker", "run", "-p", "8080:80", "nginx"),
        ("git", "log", "-p", "-3"),
    ],
)
def test_ports_paths_and_words_stay(argv: tuple[str, ...]) -> None:
    assert password_spans(argv) == {}


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 65535), st.text("abcdefghij/", min_size=1, max_size=20))
def test_ports_and_paths_never_look_like_passwords(port: int, path: str) -> None:
    assert not looks_like_password(str(port))
    assert not looks_like_password("/" + path)
