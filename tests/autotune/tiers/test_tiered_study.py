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
from contextos_lab.autotune.tiers.pick import steering, surrogate_skill
from contextos_lab.autotune.tiers.pool import PICK_ATTR
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
    ctx = tiered(big_case_dir, {"harness_kwargs": {"delay": 0.0}}, steer="front")
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
    study = run(tiered(big_case_dir, {"harness_kwargs": {"invert": True}}, steer="front"))
    assert [(t.params, t.state, case_evaluations(t)) for t in study.trials] == [
        (t.params, t.state, case_evaluations(t)) for t in plain.trials
    ]
    stances = [t.user_attrs["tiers"]["stance"] for t in study.trials]
    assert "trusted" not in stances and stances[-1] == "off"
    # once off, the screen is not paid any more
    off = [t for t in study.trials if t.user_attrs["tiers"]["stance"] == "off"]
    assert all(t.user_attrs["tiers"]["screen"] is None for t in off)


def test_the_surrogate_steer_runs_its_picks_on_the_target_and_tells_only_target_scores(
    big_case_dir: Path,
) -> None:
    ctx = tiered(big_case_dir, {"harness_kwargs": {"delay": 0.0}}, pool=20)
    study = run(ctx, 15)
    objectives = [e.value for e in ctx.spec.objectives]
    picks = [t for t in study.trials if PICK_ATTR in t.user_attrs]
    assert picks, "the surrogate (the default steer) picked what the target runs"
    assert ctx.spec.tiers is not None
    for t in picks:  # screened in the pool already: no screen calls of its own, never stopped
        tiers = t.user_attrs["tiers"]
        assert tiers["decided_by"] == "target" and tiers["screen"]["from_pool"]
        assert tiers["screen"]["calls"] == 0 and t.number % ctx.spec.tiers.audit_every != 0
        if t.state == optuna.trial.TrialState.COMPLETE:  # told the target's scores, nothing else
            assert list(t.values) == [t.user_attrs["scores"][o] for o in objectives]
    pools = [t.user_attrs["tiers"].get("pool") for t in study.trials]
    pools = [p for p in pools if p]
    assert len(pools) == 1 and 15 <= len(pools[0]["configs"]) <= 20  # screened once, up to 20
    report = tier_report(study, objectives)
    assert report["spend"]["screen"]["calls"] >= sum(p["calls"] for p in pools) > 0
    assert report["surrogate_picks"] == len(picks)
    assert "surrogate picks" in format_tier_report(report)


def test_a_disagreeing_screen_is_switched_off_and_the_surrogate_goes_on_without_it(
    big_case_dir: Path,
) -> None:
    study = run(tiered(big_case_dir, {"harness_kwargs": {"invert": True}}, pool=20))
    stances = [t.user_attrs["tiers"]["stance"] for t in study.trials]
    assert "trusted" not in stances and stances[-1] == "off"
    after = study.trials[stances.index("off") :]
    # once off, the screen is not paid any more, for a pick or a pool ...
    assert all(t.user_attrs["tiers"]["screen"] is None for t in after)
    assert not any(t.user_attrs["tiers"].get("pool") for t in after)
    # ... and what the surrogate picks it picks on the config alone
    picks = [t.user_attrs[PICK_ATTR]["why"] for t in after if PICK_ATTR in t.user_attrs]
    assert picks and all(w.startswith("surrogate pick (config)") for w in picks)


def test_picks_stop_once_their_predictions_are_measured_not_to_rank_the_target(
    big_case_dir: Path,
) -> None:
    ctx = tiered(big_case_dir, {"harness_kwargs": {"delay": 0.0}})

    def picked(utility: list[float]) -> optuna.Study:
        study = open_study(ctx, open_storage("memory"))
        for i, u in enumerate(utility):
            pick = {"predicted": [float(i)] * 3, "screen": {}, "why": "", "spread": [0.0] * 3}
            study.add_trial(optuna.trial.create_trial(
                params=ctx.space.baseline_params(), distributions=ctx.space.distributions(),
                values=[u, 0.0, 1.0], user_attrs={PICK_ATTR: pick},
            ))  # fmt: skip
        return study

    # predicted losses rank the configs the opposite way to the target's utility ...
    wrong = picked([i / 20 for i in range(12)])
    skill = surrogate_skill(wrong, ctx.spec, 0.9)
    assert skill.n == 12 and skill.high is not None and skill.high < 0.2
    assert steering(ctx, wrong, {"utility": 1.0}) is None
    # ... where ranking them alike, the surrogate goes on picking
    right = picked([1 - i / 20 for i in range(12)])
    assert steering(ctx, right, {"utility": 1.0}) == "screen"
