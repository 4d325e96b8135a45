"""Preference feedback: the envelope, its loader and signing, Bradley-Terry win rates."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from contextos_lab.cli.app import main
from contextos_lab.insights.preferences import win_rates
from contextos_lab.schemas import PreferenceEntry
from contextos_lab.store import ExperienceStore, StoreRefusal
from tests.factories import preference_entries

TRUTH = {"cfg_a": 1.0, "cfg_b": 0.3, "cfg_c": 0.0, "cfg_d": -1.0}


_entries = partial(
    preference_entries, TRUTH, signed_by="annotator_1", decision_key="support.refund"
)


def test_bradley_terry_recovers_the_true_order_with_intervals() -> None:
    table = win_rates(_entries(3000), n_boot=100)
    assert list(table["subject"]) == ["cfg_a", "cfg_b", "cfg_c", "cfg_d"]
    names = list(TRUTH)
    for row in table.itertuples():
        s = np.array([TRUTH[n] for n in names])
        i = names.index(row.subject)
        truth = np.mean([1 / (1 + np.exp(-(s[i] - s[j]))) for j in range(4) if j != i])
        assert row.ci_low <= truth <= row.ci_high, (row.subject, truth)
        assert row.ci_low < row.win_rate < row.ci_high
    assert int(table["comparisons"].sum()) == 2 * 3000


def test_few_judgements_give_wide_intervals_and_ties_count_both_ways() -> None:
    small, large = win_rates(_entries(40), n_boot=100), win_rates(_entries(2000), n_boot=100)
    width = lambda t: float((t["ci_high"] - t["ci_low"]).mean())  # noqa: E731
    assert width(small) > 2 * width(large)
    tied = win_rates(_entries(400, tie_band=0.2), n_boot=20)
    assert tied["ties"].sum() > 0 and (tied["wins"] + tied["ties"] + tied["losses"]).equals(
        tied["comparisons"]
    )


def test_loader_quarantines_bad_rows_and_the_cli_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [e.model_dump(mode="json") for e in _entries(60)]
    rows[3]["b_id"] = rows[3]["a_id"]  # the same output twice: nothing compared
    rows[5]["preferred"] = "both"
    path = tmp_path / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "wr.json"
    assert main(["preferences", str(path), "--out", str(out), "--n-boot", "20"]) == 0
    printed = capsys.readouterr().out
    assert "quarantined 2 row(s)" in printed and "cfg_a" in printed
    quarantine = [json.loads(x) for x in path.with_name(path.name + ".quarantine.jsonl")
                  .read_text().splitlines()]  # fmt: skip
    assert {q["field"] for q in quarantine} >= {"preferred"}
    assert len(json.loads(out.read_text())) == 4
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["preferences", str(empty)]) == 2


def test_preferences_are_signed_like_feedback_in_the_store(tmp_path: Path) -> None:
    store = ExperienceStore(f"sqlite:///{tmp_path}/s.db")
    entry = _entries(1)[0]
    store.append(entry)
    stored = store.get(PreferenceEntry, entry.preference_id)
    assert stored.signature is not None
    forged = _entries(2)[1].model_copy(update={"signature": "0" * 64})
    with pytest.raises(StoreRefusal, match="signature"):
        store.append(forged)


def test_win_rates_do_not_depend_on_the_order_judgements_arrive_in() -> None:
    entries = _entries(300)
    shuffled = [entries[i] for i in np.random.default_rng(7).permutation(len(entries))]
    assert win_rates(entries, n_boot=50).equals(win_rates(shuffled, n_boot=50))
