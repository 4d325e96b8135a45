"""The sweep report (notebook 02's summary and trials table) of a tiered study shows which tier
decided each config, the agreement with its interval and the calls and money per tier (issue
46); they were only in `search`'s printout and front.json."""

from __future__ import annotations

from pathlib import Path

import optuna

from contextos_lab.autotune.study.baseline import ensure_baseline
from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.study.trial_run import run_one_trial
from contextos_lab.autotune.sweep import collect
from contextos_lab.reports.sweep_summary import summary_markdown, trials_table
from tests.autotune.conftest import racing_ctx
from tests.autotune.toy import toy_cases


def test_a_tiered_study_s_report_shows_the_tiers(tmp_path: Path) -> None:
    cases = toy_cases(120)
    cases.iloc[::4].to_json(tmp_path / "heldout.jsonl", orient="records", lines=True)
    cases.drop(cases.index[::4]).to_json(tmp_path / "search.jsonl", orient="records", lines=True)
    tiers = {"screen": {"prices": {"usd_per_1m_input": 0.1}}, "min_pairs": 4}
    ctx = racing_ctx(tmp_path, prices={"usd_per_1m_input": 1.0}, tiers=tiers)
    study = open_study(ctx, open_storage("memory"))
    baseline = ensure_baseline(ctx, study)
    for _ in range(5):
        run_one_trial(ctx, study, baseline)
    result = collect(study, ctx.spec)
    summary = summary_markdown(result)
    assert "### Fidelity tiers" in summary and "screen -> target agreement" in summary
    assert "screen:" in summary and "calls, $" in summary
    table = trials_table(result).set_index("trial")
    decided = {t.number: t.user_attrs["tiers"]["decided_by"] for t in study.trials}
    assert table["tier decided"].to_dict() == decided
    assert table.loc[0, "why (tiers)"] == "the baseline runs on both tiers"
    assert study.trials[0].state == optuna.trial.TrialState.COMPLETE
