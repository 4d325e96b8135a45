"""Held-out confirmation of ResearchTask candidates (`gate.research.confirm`)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from contextos_lab.gate import research
from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources
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


def test_a_candidate_is_recounted_on_its_own_source_only() -> None:
    """Another source's held-out runs (all failed, none missing the ref) would pull the
    baseline rate of an evidence-gap pattern; they are not its population."""
    from pathlib import Path

    from contextos_lab.insights.split import SplitSpec

    tau = Path(__file__).parents[1] / "insights" / "fixtures" / "tau_bench_airline_small.json"
    report = analyse(load_sources(["synthetic:400:7"]), text_backend=None)
    cands = [c for c in report.candidates if c.pattern_spec.get("rule") in research.RULES]
    assert cands and all(c.search_counts["family"] == "records" for c in cands)
    split = SplitSpec(**{k: v for k, v in cands[0].split.items() if k != "discovered_on"})
    alone = research.heldout_runs(["synthetic:400:7"], split)
    beside = research.heldout_runs(["synthetic:400:7", str(tau)], split)
    assert len(beside) > len(alone)
    got_alone = research.confirm(cands, alone)
    got_beside = research.confirm(cands, beside)
    assert [c.heldout for c in got_alone] == [c.heldout for c in got_beside]
