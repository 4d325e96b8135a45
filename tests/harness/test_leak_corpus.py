"""Redaction against seeded corpora: every secret shape is kept out, benign lines are kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.harness.redaction import redact_argv, redact_text
from tests.harness.secret_shapes import SHAPES, Probe, benign_lines, secret_probes


def _recorded(probe: Probe) -> str:
    if isinstance(probe.payload, tuple):
        return "\n".join(redact_argv(probe.payload))
    return redact_text(probe.payload)


def test_the_corpus_has_at_least_sixty_shapes() -> None:
    assert len(SHAPES) >= 60


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_secret_shape_leaks(seed: int) -> None:
    leaked = {
        p.shape: p.payload
        for p in secret_probes(seed, per_shape=3)
        if any(s in _recorded(p) for s in p.secrets)
    }
    assert leaked == {}


@pytest.mark.parametrize("seed", [0, 1])
def test_benign_lines_are_rarely_redacted(seed: int) -> None:
    lines = benign_lines(seed, 1500)
    redacted = [line for line in lines if redact_text(line) != line]
    assert len(redacted) <= 0.02 * len(lines), redacted[:10]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_redacting_a_redacted_probe_changes_nothing(seed: int) -> None:
    for probe in secret_probes(seed):
        if isinstance(probe.payload, tuple):
            once = redact_argv(probe.payload)
            assert redact_argv(once) == once
        else:
            once = redact_text(probe.payload)
            assert redact_text(once) == once


def test_split_and_continued_secrets_redact_their_neighbours_only() -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    out = redact_argv(["aws", "--profile", "dev", key[:9], key[9:], "s3", "ls"])
    assert out[:3] == ("aws", "--profile", "dev") and out[5:] == ("s3", "ls")
    assert key[:9] not in out and key[9:] not in out
    text = "run \\\n  --password \\\n  hunter2XYZ\nnext line"
    assert redact_text(text).endswith("\nnext line") and "hunter2XYZ" not in redact_text(text)
