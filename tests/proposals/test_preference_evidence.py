"""Preference evidence in a TuningProposal: the change's win rate, interval and cited ids."""

from __future__ import annotations

from functools import partial

from contextos_lab.insights.preferences import win_rates
from contextos_lab.proposals.preference_evidence import (
    preference_evidence,
    proposal_preferences,
    trial_subject,
)
from tests.factories import preference_entries

STRENGTH = {"s/trial_0": 0.0, "s/trial_2": 1.0, "s/trial_5": -0.5, "other/trial_2": 0.2}


_entries = partial(preference_entries, STRENGTH, criterion="correctness", tie_band=0.05)


def test_the_block_is_the_bradley_terry_row_with_its_cited_judgements() -> None:
    entries = _entries(400)
    (block,) = proposal_preferences(entries, "s", 2, baseline_trial=0)
    table = win_rates(sorted(entries, key=lambda e: e.preference_id)).set_index("subject")
    assert block["subject"] == trial_subject("s", 2) == "s/trial_2"
    assert block["win_rate"] == table.loc["s/trial_2", "win_rate"]
    assert block["ci_low"] <= block["win_rate"] <= block["ci_high"]
    involved = [e for e in entries if "s/trial_2" in (e.a_subject, e.b_subject)]
    assert sorted(block["preference_ids"]) == sorted(e.preference_id for e in involved)
    assert block["comparisons"] == len(involved) == block["wins"] + block["ties"] + block["losses"]
    assert block["baseline"]["subject"] == "s/trial_0"
    assert block["win_rate"] > block["baseline"]["win_rate"]  # the stronger config ranks higher
    direct = [e for e in involved if {e.a_subject, e.b_subject} == {"s/trial_2", "s/trial_0"}]
    h2h = block["head_to_head"]
    assert h2h["wins"] + h2h["ties"] + h2h["losses"] == len(direct) > 0
    assert h2h["ties"] == sum(e.preferred.value == "tie" for e in direct)
    assert proposal_preferences(entries, "s", 2) == [block]  # deterministic: same evidence


def test_one_block_per_criterion_judged_and_none_without_judgements() -> None:
    entries = _entries(200) + _entries(150, criterion="tone", seed=1)
    blocks = proposal_preferences(entries, "s", 5)
    assert [b["criterion"] for b in blocks] == ["correctness", "tone"]
    assert proposal_preferences(entries, "s", 9) == []  # never judged: no evidence block
    # a bare `trial_2` could be any study's trial: it is not matched
    assert preference_evidence(entries, subject="trial_2") == []
    assert preference_evidence([], subject="s/trial_2") == []
