"""The vendor-token design rule: prefix, separator, random body; public digests and ids stay."""

from __future__ import annotations

import math
import string
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.redaction import redact_text
from contextos_lab.harness.token_shapes import prefixed_token_hit, public_prefix

_PREFIX = st.text(string.ascii_lowercase, min_size=2, max_size=8)
_SEP = st.sampled_from("_-.")


def _bits(s: str) -> float:
    """Empirical Shannon entropy of `s`, bits per character."""
    n = len(s)
    return -sum(s.count(c) / n * math.log2(s.count(c) / n) for c in set(s))


def _random(alphabet: str, size: int) -> st.SearchStrategy[str]:
    """Bodies that look random: uniform draws with at least 0.8 of the entropy their length and
    alphabet allow (a random 32-character body over 36 symbols is about 0.87). Shrinking reached
    '000…111…222…345678abg', which no entropy rule should call a key (found in CI twice)."""
    drawn = st.randoms(use_true_random=True).map(
        lambda r: "".join(r.choice(alphabet) for _ in range(size))
    )  # uniform draws, as a vendor's generator makes them; shrinking cannot flatten them
    most = math.log2(min(size, len(alphabet)))
    return drawn.filter(lambda s: len(set(s)) >= 12 and _bits(s) >= 0.8 * most)


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
    if public_prefix(prefix):
        return  # a prefix naming a digest or an id (object_, trace-): public by design
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


#: The prefixes the design documents as naming a digest or an id (module docstring,
#: docs/hardening_secrets.md), and vendor prefixes it names as keys.
DOCUMENTED_PUBLIC = ("sha256", "blake2b", "commit", "trace", "etag", "object")
VENDOR_PREFIXES = ("ghp", "glpat", "dop", "sntryu", "napi", "AGE", "sk", "xoxb")


@pytest.mark.parametrize("word", DOCUMENTED_PUBLIC)
def test_each_documented_public_prefix_keeps_what_follows_it_public(word: str) -> None:
    body = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    assert public_prefix(word) and public_prefix(word.upper())
    for sep in "_-.":
        assert prefixed_token_hit(f"{word}{sep}{body}") is None


@pytest.mark.parametrize("word", VENDOR_PREFIXES)
def test_a_vendor_prefix_is_not_public(word: str) -> None:
    assert not public_prefix(word)
    assert prefixed_token_hit(f"{word}_9f86d081884c7d659a2feaa0c55ad015") == "vendor_token"
