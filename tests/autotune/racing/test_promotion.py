"""Promotion on estimated gain: a config goes on only while its paired point estimate adds
feasible hypervolume; the rest stop as not promoted, recorded apart from evidence drops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from contextos_lab.autotune.racing.promotion import (
    UNDER_BAR,
    UNDER_BAR_ATTR,
    not_promoted_reason,
    point_estimate,
    promotes_on_estimate,
    promotion_bar,
    promotion_estimate,
    regression_slope,
    run_variance,
)
from contextos_lab.autotune.racing.references import Reference
from contextos_lab.autotune.study.run import run_study
from tests.autotune.conftest import racing_ctx

NAMES = ("policy", "safety", "utility", "latency", "economics")


def _reference(number: int, prefix: pd.DataFrame, means: dict[str, float]) -> Reference:
    return Reference(number, means, {c: prefix[c].to_numpy(dtype=float) for c in prefix})


def _cases(n: int, utility: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "policy": np.ones(n),
            "safety": np.ones(n),
            "utility": (rng.random(n) < utility).astype(float),
            "latency": rng.normal(200.0, 20.0, n),
            "economics": rng.normal(1.0, 0.1, n),
        }
    )


def test_the_point_estimate_is_the_references_exact_mean_plus_the_paired_difference() -> None:
    ref_cases = _cases(40, 0.5)
    means = dict(zip(NAMES, [1.0, 1.0, 0.6, 210.0, 1.1], strict=True))
    ref = _reference(3, ref_cases, means)
    mine = ref_cases.assign(latency=ref_cases["latency"] - 10.0)
    point = point_estimate(mine, ref)
    assert point["utility"] == 0.6 and abs(point["latency"] - 200.0) < 1e-9


def test_a_reference_lucky_on_the_prefix_does_not_pull_an_unrelated_config_down() -> None:
    """The regression estimator: a reference that scored 0.1 above its set mean on the prefix
    and shares no case effect with the candidate (noise drawn per config, as an LLM's) leaves
    the candidate near its own prefix mean; the plain paired estimate would hand it the
    reference's luck (seed 0 of the stand-in stalled on that)."""
    rng = np.random.default_rng(3)
    n = 400
    ref_cases = _cases(n, 0.5, seed=1)
    means = dict(ref_cases.mean())
    means["utility"] = float(ref_cases["utility"].mean()) - 0.1  # lucky on the prefix
    ref = _reference(0, ref_cases, means)
    mine = _cases(n, 0.5, seed=2)  # independent of the reference case by case
    point = point_estimate(mine, ref)
    own = float(mine["utility"].mean())
    paired = own - 0.1
    assert abs(point["utility"] - own) < 0.02 < abs(point["utility"] - paired)
    assert regression_slope(mine["utility"].to_numpy(), ref_cases["utility"].to_numpy()) < 0.2
    # a config that follows the reference case by case keeps the paired estimate: a slope of 1
    follows = ref_cases.assign(utility=ref_cases["utility"])
    assert point_estimate(follows, ref)["utility"] == means["utility"]
    # and a reference constant on the prefix pairs as before (no slope to measure)
    flat = ref_cases.assign(utility=np.ones(n))
    flat_ref = _reference(0, flat, {**means, "utility": 0.9})
    shifted = flat.assign(utility=(rng.random(n) < 0.95).astype(float))
    expect = float(shifted["utility"].mean()) - 0.1
    assert abs(point_estimate(shifted, flat_ref)["utility"] - expect) < 1e-12


def test_a_twin_of_a_front_member_is_not_promoted_and_a_better_config_is(
    big_case_dir: Path,
) -> None:
    ctx = racing_ctx(big_case_dir)
    objectives = [e.value for e in ctx.spec.objectives]
    prefix = _cases(40, 0.5)
    means = {"policy": 1.0, "safety": 1.0, "utility": 0.6, "latency": 210.0, "economics": 1.1}
    ref = _reference(7, prefix, means)
    front = [(np.array([means[n] for n in objectives]), ref)]
    why = not_promoted_reason(ctx, prefix.copy(), front, ref)
    assert why is not None and why.startswith("not promoted") and "trial #7" in why
    assert "economics 1.1;" in why  # the estimate it was judged on (a twin: the front's)
    better = prefix.assign(economics=prefix["economics"] - 0.2)  # cheaper, all else equal
    assert not_promoted_reason(ctx, better, front, ref) is None
    # nothing to pair with, or no feasible front yet: every config goes on
    assert not_promoted_reason(ctx, prefix, front, None) is None
    assert not_promoted_reason(ctx, prefix, [], ref) is None


def test_a_sliver_of_hypervolume_is_not_promoted_and_a_new_region_is(
    big_case_dir: Path,
) -> None:
    """Not dominated is not enough: the estimated gain must be `promotion_min_gain` of the
    front's hypervolume (the noisy stand-in's near-front configs), while a config that opens a
    new trade-off goes on; at 0 any gain is promoted, as before."""
    objectives = ("utility", "latency", "economics")
    prefix = _cases(40, 0.5)
    means = {"policy": 1.0, "safety": 1.0, "utility": 0.6, "latency": 210.0, "economics": 1.1}
    ref = _reference(7, prefix, means)
    front = [(np.array([means[n] for n in objectives]), ref)]
    # a hair cheaper than the front member and otherwise the same: not dominated, tiny gain
    sliver = prefix.assign(economics=prefix["economics"] - 0.001)
    # much cheaper and a little less useful: a new region of the trade-off
    region = prefix.assign(economics=prefix["economics"] - 0.8, utility=prefix["utility"] * 0.9)
    strict = racing_ctx(big_case_dir, racing={"promotion_min_gain": 0.01})
    assert [e.value for e in strict.spec.objectives] == list(objectives)
    why = not_promoted_reason(strict, sliver, front, ref)
    assert (
        why is not None
        and why.startswith("not promoted")
        and "(under the promotion bar, 1.0000%)" in why
    )
    assert not_promoted_reason(strict, region, front, ref) is None
    anything = racing_ctx(big_case_dir, racing={"promotion_min_gain": 0.0})
    assert not_promoted_reason(anything, sliver, front, ref) is None


def test_only_the_samplers_own_configs_stop_on_the_point_estimate(big_case_dir: Path) -> None:
    study = optuna.create_study()
    study.enqueue_trial({}, user_attrs={"proposer": {"by": "a reviewer"}})
    asked, sampled = study.ask(), study.ask()
    ctx = racing_ctx(big_case_dir, racing={"promotion": "estimated_gain"})
    assert not promotes_on_estimate(ctx, asked) and promotes_on_estimate(ctx, sampled)
    possible = racing_ctx(big_case_dir, racing={"promotion": "possible"})
    assert not promotes_on_estimate(possible, sampled)
    default = racing_ctx(big_case_dir)  # promotion: estimated_gain, the benchmarked setting
    assert promotes_on_estimate(default, sampled)


def test_promotion_pays_fewer_cases_than_racing_on_evidence_alone(big_case_dir: Path) -> None:
    """Same sampler, same proposals until the first difference: estimated_gain stops configs
    that only repeat the front, so the study pays fewer case evaluations for the same trials."""
    spent = {}
    for promotion in ("possible", "estimated_gain"):
        ctx = racing_ctx(
            big_case_dir, racing={"promotion": promotion}, sampler={"kind": "random", "seed": 5}
        )
        study = run_study(ctx, "memory", n_trials=60, progress=False)
        spent[promotion] = sum(t.user_attrs["racing"]["case_evaluations"] for t in study.trials)
        if promotion == "estimated_gain":
            stopped = [
                t for t in study.get_trials(states=(TrialState.PRUNED,))
                if t.user_attrs["racing"]["not_promoted"]
            ]  # fmt: skip
            assert stopped
            for t in stopped:
                racing = t.user_attrs["racing"]
                assert racing["dropped"].startswith("not promoted")
                assert racing["stage"] < racing["n_stages"] and "scores" not in t.user_attrs
                assert t.constraints["racing_drop"] > 0 and t.values is None
                point = racing["point_estimate"]  # the paired means the reason shows
                assert set(point) == set(racing["estimates"])
                for name in ("utility", "latency", "economics"):
                    assert f"{name} {point[name]:.4g}" in racing["dropped"]
    assert spent["estimated_gain"] < spent["possible"]


def test_an_enqueued_repeat_of_the_baseline_is_completed_not_stopped(big_case_dir: Path) -> None:
    """A sampled repeat of a front member stops early; the same config proposed from outside is
    completed (the gate judges a feasible outside proposal on the front or not)."""
    ctx = racing_ctx(
        big_case_dir, racing={"promotion": "estimated_gain"}, sampler={"kind": "random", "seed": 5}
    )
    storage = str(big_case_dir / "study.log")
    study = run_study(ctx, storage, n_trials=10, progress=False)
    params = dict(study.trials[0].params)
    study.enqueue_trial(params, user_attrs={"proposer": {"by": "a reviewer"}})
    study.enqueue_trial(params)
    study = run_study(ctx, storage, n_trials=12, progress=False)
    outside, sampled = study.trials[10], study.trials[11]
    assert outside.params == sampled.params == params
    assert outside.state == TrialState.COMPLETE
    assert sampled.state == TrialState.PRUNED and sampled.user_attrs["racing"]["not_promoted"]


def test_the_promotion_rule_does_not_change_the_racing_order(big_case_dir: Path) -> None:
    """A study resumed under the other rule keeps pairing with the references it kept."""
    from contextos_lab.autotune.racing.racing import order_key

    keys = {
        order_key(racing_ctx(big_case_dir, racing={"promotion": p}))
        for p in ("possible", "estimated_gain")
    }
    assert len(keys) == 1
    assert order_key(racing_ctx(big_case_dir, racing={"z": 3.0})) not in keys


def test_a_deficit_within_the_noise_goes_on_where_runs_are_noisy_and_stops_elsewhere(
    big_case_dir: Path,
) -> None:
    """`promotion_z`: on an evaluator whose runs are noisy, promotion judges the regression
    estimate moved z standard errors of it its better way. A config 0.01 behind a front member
    in utility on 40 cases (residual spread 0.2) goes on at z = 0.5 and stops at z = 0; the
    same config stops where the runs do not vary (a deterministic harness), and so does the
    same deficit without spread."""
    n = 40
    r = np.linspace(0.3, 0.9, n)
    prefix = _cases(n, 0.5).assign(utility=r)
    means = {"policy": 1.0, "safety": 1.0, "utility": 0.6, "latency": 210.0, "economics": 1.1}
    ref = _reference(4, prefix, means)
    objectives = ("utility", "latency", "economics")
    front = [(np.array([means[k] for k in objectives]), ref)]
    e = np.where(np.arange(n) % 2 == 0, 0.2, -0.2)
    rc = r - r.mean()
    e = e - (e @ rc) / (rc @ rc) * rc  # orthogonal to the reference: the slope stays 1
    noisy = prefix.assign(utility=r - 0.01 + e)
    exact = prefix.assign(utility=r - 0.01)
    assert abs(point_estimate(noisy, ref)["utility"] - 0.59) < 1e-9
    assert abs(point_estimate(exact, ref)["utility"] - 0.59) < 1e-9
    runs_vary = {"utility": 0.05}
    doubt = racing_ctx(big_case_dir, racing={"promotion_z": 0.5, "promotion_min_gain": 0.0})
    none = racing_ctx(big_case_dir, racing={"promotion_z": 0.0, "promotion_min_gain": 0.0})
    assert [e.value for e in doubt.spec.objectives] == list(objectives)
    assert not_promoted_reason(doubt, noisy, front, ref, runs_vary) is None
    why = not_promoted_reason(none, noisy, front, ref, runs_vary)
    assert why is not None and "weakly dominated by trial #4" in why and "point estimate" in why
    why = not_promoted_reason(doubt, noisy, front, ref, {})  # deterministic runs: no doubt
    assert why is not None and "point estimate" in why
    why = not_promoted_reason(doubt, exact, front, ref, runs_vary)
    assert why is not None and "estimate + 0.5 standard error(s)" in why
    # the step: z * sd(x - beta r) / sqrt(n), finite-population corrected, gone at the end
    sd = float((noisy["utility"] - r).std(ddof=1))
    far = promotion_estimate(noisy, ref, n_total=10**9, z=0.5, run_var=runs_vary)["utility"]
    assert abs(far - (0.59 + 0.5 * sd / np.sqrt(n))) < 1e-6 and far > 0.6
    done = promotion_estimate(noisy, ref, n_total=n, z=0.5, run_var=runs_vary)["utility"]
    assert abs(done - 0.59) < 1e-9  # every case run: nothing left to doubt


def test_run_variance_is_the_spread_between_a_cases_repeats() -> None:
    """Per case the variance between repeats, averaged over cases, over the repeats: the run
    noise in a case's mean. One run per case measures nothing."""
    long = pd.DataFrame(
        {
            "utility": [1.0, 0.0, 1.0, 1.0, 1.0, 1.0],
            "latency": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "error": [False] * 6,
        },
        index=pd.Index(["a", "a", "a", "b", "b", "b"], name="case_id"),
    )
    got = run_variance(long, repeats=3)
    assert abs(got["utility"] - (1 / 3 + 0) / 2 / 3) < 1e-12
    assert abs(got["latency"] - 1.0 / 3) < 1e-12 and "error" not in got
    assert run_variance(long.iloc[::3], repeats=1) == {}


def _verdicts(study: optuna.Study, kinds: str) -> None:
    """Finished trials in order: `s` a sliver verdict (under the bar), `d` an evidence drop,
    `c` a completed trial."""
    for kind in kinds:
        if kind == "c":
            study.add_trial(optuna.trial.create_trial(value=0.0))
            continue
        why = f"not promoted: adds 0.1% ({UNDER_BAR}, 0.2%)" if kind == "s" else "dominated"
        raced = {"dropped": why, UNDER_BAR_ATTR: kind == "s"}  # the typed flag, not the text
        study.add_trial(
            optuna.trial.create_trial(state=TrialState.PRUNED, user_attrs={"racing": raced})
        )


def test_the_promotion_bar_halves_after_patience_slivers_in_a_row() -> None:
    """The bar is an opportunity cost: it halves once the sampler has proposed `patience`
    configs in a row that only a bar stopped, with nothing completed between; evidence drops
    neither count nor break the run, a completion does, and later trials are not read."""
    study = optuna.create_study()
    _verdicts(study, "sssdsc" + "ssdsssss")  # sliver runs of 4 and (after the completion) 7
    n = len(study.trials)
    assert promotion_bar(study, 0.004, 0, n) == 0.004  # patience 0: a fixed bar
    assert promotion_bar(study, 0.004, 5, n) == 0.002  # only the run after the completion
    assert promotion_bar(study, 0.004, 4, n) == 0.001  # 4 -> halve; 7 -> once more
    assert promotion_bar(study, 0.004, 4, 6) == 0.002  # the first run of 4 only
    assert promotion_bar(study, 0.004, 4, 3) == 0.004  # three slivers: not yet
    assert promotion_bar(study, 0.0, 1, n) == 0.0
    # a `racing` attribute edited out of shape is read as no verdict, never a crash
    study.add_trial(
        optuna.trial.create_trial(state=TrialState.PRUNED, user_attrs={"racing": "garbled"})
    )
    assert promotion_bar(study, 0.004, 4, n + 1) == 0.001


def test_the_promotion_bar_counts_the_typed_flag_never_the_reason_text() -> None:
    """A reason that merely mentions the bar (an operator's note, a reworded message) is not a
    sliver verdict; the typed `under_bar` flag is, whatever the text says."""
    worded, flagged = optuna.create_study(), optuna.create_study()
    for study, raced in ((worded, {"dropped": f"note: {UNDER_BAR}"}),
                         (flagged, {"dropped": "reworded", UNDER_BAR_ATTR: True})):  # fmt: skip
        for _ in range(2):
            study.add_trial(
                optuna.trial.create_trial(state=TrialState.PRUNED, user_attrs={"racing": raced})
            )
    assert promotion_bar(worded, 0.004, 2, 2) == 0.004
    assert promotion_bar(flagged, 0.004, 2, 2) == 0.002


def test_a_lowered_bar_promotes_the_sliver_the_spec_s_bar_stops(big_case_dir: Path) -> None:
    objectives = ("utility", "latency", "economics")
    prefix = _cases(40, 0.5)
    means = {"policy": 1.0, "safety": 1.0, "utility": 0.6, "latency": 210.0, "economics": 1.1}
    ref = _reference(7, prefix, means)
    front = [(np.array([means[n] for n in objectives]), ref)]
    sliver = prefix.assign(economics=prefix["economics"] - 0.01)
    ctx = racing_ctx(big_case_dir, racing={"promotion_min_gain": 0.01})
    why = not_promoted_reason(ctx, sliver, front, ref)
    assert why is not None and UNDER_BAR in why
    assert not_promoted_reason(ctx, sliver, front, ref, bar=0.01 / 64) is None
