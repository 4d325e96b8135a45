"""A tiered study (issue 46): only the target's scores are told, the screen decides only as far
as its measured agreement earns, and a screen that disagrees leaves target-only racing as is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.racing.racing import case_evaluations
from contextos_lab.autotune.study.baseline import ensure_baseline
from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.storage import open_storage
from contextos_lab.autotune.study.trial_run import run_one_trial
from contextos_lab.autotune.tiers.report import format_tier_report, tier_report
from contextos_lab.harness.execution import harness_key
from tests.autotune.conftest import racing_ctx

N_TRIALS = 30
PRICES = {"usd_per_1m_input": 1.0}
CHEAP = {"usd_per_1m_input": 0.1}


def run(ctx: RunContext, n: int = N_TRIALS) -> optuna.Study:
    study = open_study(ctx, open_storage("memory"))
    baseline = ensure_baseline(ctx, study)
    for _ in range(n):
        run_one_trial(ctx, study, baseline)
    return study


def tiered(case_dir: Path, screen: dict[str, Any], **tiers: Any) -> RunContext:
    spec_tiers = {"screen": {"prices": CHEAP, **screen}, "min_pairs": 6, **tiers}
    return racing_ctx(case_dir, prices=PRICES, tiers=spec_tiers)


def test_an_agreeing_screen_stops_configs_before_the_target_pays(big_case_dir: Path) -> None:
    ctx = tiered(big_case_dir, {"harness_kwargs": {"delay": 0.0}})
    study = run(ctx)
    by_screen = [t for t in study.trials if t.user_attrs["tiers"]["decided_by"] == "screen"]
    assert by_screen, "an agreeing screen earned trust and stopped some configs"
    for t in by_screen:  # pruned before any target call, never told a value
        assert t.state == optuna.trial.TrialState.PRUNED and case_evaluations(t) == 0
        assert t.values is None and t.user_attrs["tiers"]["stance"] == "trusted"
        assert t.user_attrs["spend"]["calls"] == t.user_attrs["tiers"]["screen"]["calls"] > 0
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert complete and all(t.user_attrs["tiers"]["decided_by"] == "target" for t in complete)
    report = tier_report(study, [e.value for e in ctx.spec.objectives])
    assert report["agreement"]["low"] > 0.5
    assert report["spend"]["screen"]["calls"] > 0 and report["spend"]["target"]["calls"] > 0
    assert report["decided_by"]["screen"] == len(by_screen)
    assert "agreement" in format_tier_report(report)
    # the screen's answers are cached apart from the target's (same harness, another key)
    assert ctx.screen is not None
    assert harness_key(ctx.screen.harness) != harness_key(ctx.harness)


def test_a_disagreeing_screen_leaves_target_only_racing_unchanged(big_case_dir: Path) -> None:
    plain = run(racing_ctx(big_case_dir, prices=PRICES))
    study = run(tiered(big_case_dir, {"harness_kwargs": {"invert": True}}))
    assert [(t.params, t.state, case_evaluations(t)) for t in study.trials] == [
        (t.params, t.state, case_evaluations(t)) for t in plain.trials
    ]
    stances = [t.user_attrs["tiers"]["stance"] for t in study.trials]
    assert "trusted" not in stances and stances[-1] == "off"
    # once off, the screen is not paid any more
    off = [t for t in study.trials if t.user_attrs["tiers"]["stance"] == "off"]
    assert all(t.user_attrs["tiers"]["screen"] is None for t in off)
