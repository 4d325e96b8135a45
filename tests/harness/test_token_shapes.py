"""The vendor-token design rule: prefix, separator, random body; public digests and ids stay."""

from __future__ import annotations

import math
import string
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.redaction import redact_text
from contextos_lab.harness.token_shapes import _PUBLIC_PREFIX as PUBLIC_PREFIX
from contextos_lab.harness.token_shapes import prefixed_token_hit

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
    if PUBLIC_PREFIX.search(prefix):
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
