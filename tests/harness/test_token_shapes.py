"""The vendor-token design rule: prefix, separator, random body; public digests and ids stay."""

from __future__ import annotations

import string
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.redaction import redact_text
from contextos_lab.harness.token_shapes import prefixed_token_hit

_PREFIX = st.text(string.ascii_lowercase, min_size=2, max_size=8)
_SEP = st.sampled_from("_-.")


def _random(alphabet: str, size: int) -> st.SearchStrategy[str]:
    """Bodies that look random: many distinct characters and none filling a quarter of it
    (shrinking otherwise reaches '000…012345678abg', which no entropy rule should call a key,
    found in CI)."""
    return st.text(alphabet, min_size=size, max_size=size).filter(
        lambda s: len(set(s)) >= 12 and max(map(s.count, set(s))) <= size // 4
    )


@settings(max_examples=60, deadline=None)
@given(prefix=_PREFIX, sep=_SEP, body=_random("0123456789abcdef", 40))
def test_a_vendor_prefix_before_a_hex_body_is_a_token(prefix: str, sep: str, body: str) -> None:
    if prefix in {"sha", "md", "id", "git", "rev", "req", "hash", "sum", "g"}:
        return  # a prefix naming a digest or an id: public by design
    assert prefixed_token_hit(f"created {prefix}{sep}{body} for ci") == "vendor_token"
    assert body not in redact_text(f"{prefix}{sep}{body}")


@settings(max_examples=60, deadline=None)
@given(prefix=_PREFIX, body=_random(string.ascii_lowercase + string.digits, 32))
def test_a_lower_case_random_body_is_a_token(prefix: str, body: str) -> None:
    if sum(c.isdigit() for c in body) < 3 or sum(c.isalpha() for c in body) < 3:
        return
    assert body not in redact_text(f"{prefix}_{body}")


@settings(max_examples=40, deadline=None)
@given(st.uuids(), st.sampled_from(["pvc-", "sdk-", "run_", "job."]))
def test_uuids_and_named_digests_are_public(u: uuid.UUID, prefix: str) -> None:
    assert prefixed_token_hit(f"{prefix}{u}") is None
    assert prefixed_token_hit(f"blake2b-{u.hex}{u.hex}") is None
    assert prefixed_token_hit(f"sha256-{u.hex}") is None


def test_wheels_versions_and_pod_names_are_not_tokens() -> None:
    for line in (
        "numpy-2.4.6-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "v1.2.3-rc.1+build.9fceb02",
        "worker-7d9c6b5f4-x2k9p",
        "contextos_lab.harness.redaction_context",
    ):
        assert prefixed_token_hit(line) is None, line
