"""CredSweeper's rules run offline, inside the package, and ids are not secrets."""

from __future__ import annotations

import multiprocessing
import random
import socket
import uuid

import pytest

from contextos_lab.harness.credsweeper_scan import credsweeper_hit


def test_a_vendor_rule_fires_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    rng = random.Random(4)
    token = "shpat_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    credsweeper_hit.cache_clear()
    assert credsweeper_hit(f"export SHOP={token}") is not None


def test_a_uuid_is_an_id() -> None:
    assert credsweeper_hit(f"request_id={uuid.UUID(int=random.Random(1).getrandbits(128))}") is None


def test_scanning_starts_no_process() -> None:
    credsweeper_hit.cache_clear()
    credsweeper_hit("export TOKEN=dop_v1_" + "9f3a" * 16)
    assert multiprocessing.active_children() == []
