"""Pass-4 secrets: vendor token formats, CLI password argv forms, benign look-alikes."""

from __future__ import annotations

import shlex

import pytest

from benchmarks.corpora.vendor_secrets import (
    ARGV_FORMS,
    HELDOUT_VENDORS,
    VENDORS,
    argv_probes,
    lookalike_lines,
    vendor_probes,
)
from contextos_lab.harness.redaction import redact_argv, redact_text


def test_the_corpus_covers_sixty_vendors_and_twelve_cli_forms() -> None:
    assert len(VENDORS) >= 60 and len(ARGV_FORMS) >= 12
    assert not set(VENDORS) & set(HELDOUT_VENDORS)


@pytest.mark.parametrize("heldout", [False, True])
def test_no_vendor_token_reaches_the_record(heldout: bool) -> None:
    leaked = [
        p.payload
        for p in vendor_probes(7, per_vendor=1, heldout=heldout)
        if any(s in redact_text(str(p.payload)) for s in p.secrets)
    ]
    assert leaked == []


def test_no_cli_password_reaches_the_record_as_argv_or_shell_line() -> None:
    leaked = []
    for p in argv_probes(7, per_form=1):
        assert isinstance(p.payload, tuple)
        for recorded in ("\n".join(redact_argv(p.payload)), redact_text(shlex.join(p.payload))):
            if any(s in recorded for s in p.secrets):
                leaked.append((p.shape, recorded))
    assert leaked == []


def test_benign_lookalikes_are_kept() -> None:
    lines = lookalike_lines(7, 600)
    redacted = [line for line in lines if redact_text(line) != line]
    assert len(redacted) <= 0.02 * len(lines), redacted[:10]
