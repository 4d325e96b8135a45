"""Held-out confirmation of ResearchTask candidates (`gate.research.confirm`)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from contextos_lab.gate import research
from contextos_lab.insights.pipeline import analyse, load_sources
from contextos_lab.insights.support import Counts, rate_test


def test_a_p_value_of_exactly_zero_stays_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """An overwhelming held-out rate underflows the z-test to p == 0.0; `0.0 or 1.0` used to
    turn it into 1.0 (unconfirmed). Only a missing p-value is replaced by 1.0."""
    counts = Counts(hits_in=5000, n_in=5000, hits_out=100, n_out=5000)
    assert rate_test(counts)["p_value"] == 0.0
    report = analyse(load_sources(["synthetic:400:7"]), text_backend=None)
    [cand] = [c for c in report.candidates if c.pattern_spec.get("rule") in research.RULES][:1]
    monkeypatch.setattr(research, "measure", lambda spec, frame: SimpleNamespace(counts=counts))

    [c] = research.confirm([cand], pd.DataFrame(), alpha=0.05)

    assert c.p_adjusted == 0.0
    assert c.confirmed and c.basis == "confirmed_on_heldout"
