"""Racing rounds: exact breach proofs between a stage's statistical looks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.objective import constraint_values
from contextos_lab.autotune.racing.order import racing_order
from contextos_lab.autotune.racing.proof import proven_breach
from contextos_lab.autotune.racing.racing import case_evaluations, order_key, racing_seed
from contextos_lab.autotune.spec.fidelity import RacingSchedule
from contextos_lab.autotune.study.baseline import ensure_baseline
from contextos_lab.autotune.study.open import open_study
from contextos_lab.autotune.study.run import work
from contextos_lab.autotune.study.storage import open_storage
from tests.autotune.conftest import racing_ctx

#: What an unseen case scores at best on each toy evaluator.
BEST = {"policy": 1.0, "safety": 1.0, "utility": 1.0, "latency": 0.0, "economics": 0.0}
#: A config the toy harness scores 0 on policy for every risky case (approval_threshold < 0.6).
BREACHING = {"top_k": 4, "max_hops": 2, "approval_threshold": 0.5, "budget": 2000}
ERRORING = {"top_k": 1, "max_hops": 2, "approval_threshold": 0.7, "budget": 2000}
_CTX: dict[Path, RunContext] = {}  # one context per hypothesis run (the fixture is reused)


@given(
    start=st.integers(0, 3000),
    new=st.integers(1, 3000),
    rounds=st.integers(1, 8),
    concurrency=st.integers(1, 64),
)
def test_rounds_double_end_at_the_stage_and_never_idle_a_slot(
    start: int, new: int, rounds: int, concurrency: int
) -> None:
    ends = RacingSchedule(rounds=rounds).round_ends(start, start + new, concurrency)
    assert ends[-1] == start + new and len(ends) <= rounds
    sizes = np.diff([start, *ends])
    assert (sizes > 0).all()
    assert (sizes[:-1] >= concurrency).all()  # only the stage's own last round may be short
    if rounds == 1 or new <= concurrency:
        assert ends == [start + new]


def test_rounds_of_the_default_schedule_on_a_684_case_set() -> None:
    schedule = RacingSchedule()
    assert schedule.round_ends(0, 34) == [5, 9, 17, 34]
    assert schedule.round_ends(0, 34, concurrency=8) == [9, 17, 34]
    assert schedule.round_ends(274, 479) == [300, 326, 377, 479]
    assert RacingSchedule(rounds=1).round_ends(0, 34) == [34]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_breach_is_proven_exactly_when_the_best_completion_still_breaches(
    big_case_dir: Path, data: st.DataObject
) -> None:
    """Sound and complete: proven iff filling every unseen case with its best score still
    leaves a constraint violated (so no completion of the set can be feasible)."""
    if big_case_dir not in _CTX:  # a latency delta too: the minimize side of the proof
        deltas = {"utility": 0.5, "latency": 20.0, "economics": None}
        floors = {"policy": 0.99, "safety": 1.0}
        guardrails = {"floors": floors, "accepted_deltas": deltas}
        _CTX[big_case_dir] = _ctx(big_case_dir, guardrails=guardrails)
    ctx = _CTX[big_case_dir]
    n_total = len(ctx.search)
    n = data.draw(st.integers(1, n_total), label="cases run")
    bits = st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)
    ran = pd.DataFrame(
        {
            # 0-6 failing cases: around the 0.99 floor's 4.5 of 450, so deltas get their turn
            "policy": np.r_[
                np.zeros(fails := min(n, data.draw(st.integers(0, 6)))), np.ones(n - fails)
            ],
            "safety": np.ones(n),
            "utility": data.draw(bits, label="utility"),
            "latency": data.draw(
                st.lists(st.floats(0.0, 400.0), min_size=n, max_size=n), label="latency"
            ),
            "economics": np.full(n, 1.0),
        }
    )
    baseline = {
        **BEST,
        "utility": data.draw(st.floats(0.0, 1.0), label="baseline utility"),
        "latency": data.draw(st.floats(0.0, 200.0), label="baseline latency"),
    }
    best = pd.concat([ran, pd.DataFrame([BEST] * (n_total - n))], ignore_index=True)
    violated = {k: v for k, v in constraint_values(ctx, best.mean(), baseline).items() if v > 1e-9}
    proof = proven_breach(ctx, ran, baseline, n_errors=0, repeats=1)
    assert (proof is not None) == bool(violated)
    if proof is not None:
        assert proof[1] > 0
        assert any(name.split("_", 1)[1] in proof[0].split(":")[0] for name in violated)


def test_an_error_rate_past_the_cap_is_proven_before_the_set_ends(big_case_dir: Path) -> None:
    ctx = _ctx(big_case_dir, max_error_rate=0.02)
    ran = pd.DataFrame([BEST] * 20)
    assert proven_breach(ctx, ran, BEST, n_errors=9, repeats=1) is None  # 9/450 = 0.02
    why, margin = proven_breach(ctx, ran, BEST, n_errors=10, repeats=1) or ("", 0.0)
    assert why.startswith("floor error_rate: at least 0.0222") and margin > 0
    assert proven_breach(ctx, ran, BEST, n_errors=10, repeats=3) is None  # of 1,350 runs


def test_a_floor_breach_stops_in_the_smoke_stages_first_round(big_case_dir: Path) -> None:
    """Against a 1.0 floor one failing case is proof: the trial stops after the round
    that holds it, not at the end of the smoke stage."""
    deltas = {"utility": 0.5, "latency": None, "economics": None}
    guardrails = {"floors": {"policy": 1.0, "safety": 1.0}, "accepted_deltas": deltas}
    ctx = _ctx(big_case_dir, guardrails=guardrails)
    study = _raced(ctx, BREACHING)
    trial = study.trials[1]
    racing = trial.user_attrs["racing"]
    order = racing_order(ctx)
    risky = ctx.search.cases.iloc[order]["risky"].to_numpy()
    first_round = ctx.spec.racing.round_ends(0, ctx.spec.racing.sizes(len(ctx.search))[0])[0]
    assert risky[:first_round].any()  # the first round holds a risky case: policy 0 there
    assert trial.state == TrialState.PRUNED and racing["stage"] == 1
    assert case_evaluations(trial) == racing["case_evaluations"] == first_round
    assert (
        racing["dropped"].startswith("floor policy") and "even if every unseen" in racing["dropped"]
    )
    assert trial.constraints["racing_drop"] > 0 and trial.constraints["floor_policy"] > 0
    one_call = _raced(_ctx(big_case_dir, rounds=1, guardrails=guardrails), BREACHING).trials[1]
    assert case_evaluations(one_call) == ctx.spec.racing.sizes(len(ctx.search))[0]


def test_a_round_whose_every_run_errored_does_not_fail_the_trial(big_case_dir: Path) -> None:
    """'Every case errored' is judged per stage, as before rounds: a first round of errors
    followed by cases that run is a config that breaches (errored runs fail), not a
    harness failure; a stage that errors throughout still fails the trial."""
    probe = _ctx(big_case_dir)
    order = racing_order(probe)
    first_round = probe.spec.racing.round_ends(0, probe.spec.racing.sizes(len(probe.search))[0])
    ids = probe.search.cases.iloc[order[: first_round[0]]]["case_id"].tolist()
    study = _raced(_ctx(big_case_dir, harness_kwargs={"error_ids": ids}), ERRORING)
    trial = study.trials[1]
    assert trial.state == TrialState.PRUNED
    assert case_evaluations(trial) == first_round[1]  # the next round's cases ran, then the proof
    everything = probe.search.cases["case_id"].tolist()
    failed = _raced(_ctx(big_case_dir, harness_kwargs={"error_ids": everything}), ERRORING)
    trial = failed.trials[1]
    assert trial.state == TrialState.FAIL
    assert trial.user_attrs["fail_reason"] == "every case errored; first: toy error"


def _ctx(case_dir: Path, rounds: int | None = None, **overrides: object) -> RunContext:
    racing = {"promotion": "possible", **({"rounds": rounds} if rounds else {})}
    return racing_ctx(case_dir, racing=racing, **overrides)


def _raced(ctx: RunContext, params: dict[str, object]) -> optuna.Study:
    """The baseline, then `params` raced once."""
    study = open_study(ctx, open_storage("memory"))
    ensure_baseline(ctx, study)
    study.enqueue_trial(params)
    work(ctx, study, budget=2)
    return study


def test_a_nan_score_in_a_round_fails_the_trial_and_the_study_goes_on(big_case_dir: Path) -> None:
    """NaN is never evidence: a round that scores NaN fails its trial (as a stage end does)
    before any proof is drawn from it, instead of raising out of the worker."""
    deltas = {"utility": 0.5, "latency": None, "economics": None}
    ctx = _ctx(
        big_case_dir,
        guardrails={"floors": {"policy": 1.0, "safety": 1.0}, "accepted_deltas": deltas},
    )
    study = open_study(ctx, open_storage("memory"))
    ensure_baseline(ctx, study)
    scores = ctx.evaluate

    def with_nan(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
        out = scores(cases, results)
        out.iloc[0, out.columns.get_loc("utility")] = float("nan")
        return out

    ctx.evaluate = with_nan
    study.enqueue_trial(BREACHING)
    study.enqueue_trial(BREACHING | {"max_hops": 1})
    work(ctx, study, budget=3)
    assert [t.state for t in study.trials[1:]] == [TrialState.FAIL, TrialState.FAIL]
    assert study.trials[1].user_attrs["fail_reason"].startswith("evaluation produced NaN scores")


def test_out_of_range_scores_prove_nothing(big_case_dir: Path) -> None:
    """A proof leans on each score's range; an evaluator off its scale gets none."""
    ctx = _ctx(big_case_dir)
    ran = pd.DataFrame([{**BEST, "policy": 0.0}] * 20)
    assert proven_breach(ctx, ran, BEST, n_errors=0, repeats=1) is not None
    off_scale = ran.assign(utility=50.0)  # a 0-100 utility where 0-1 belongs
    assert proven_breach(ctx, off_scale, BEST, n_errors=0, repeats=1) is None


def test_rounds_leave_the_racing_order_key_as_it_was(big_case_dir: Path) -> None:
    """A study started before rounds existed keeps pairing with the references it kept: the key
    is the one the schedule without `rounds` (and without `promotion` or its least gain) gave.
    Its spec names the 30-case smoke stage that was then the default (the default is now 12, a
    schedule field that does decide the order)."""
    import hashlib

    def ctx_of(**racing: object) -> RunContext:
        return racing_ctx(big_case_dir, racing={"min_cases": 30, **racing})

    keys = {
        order_key(ctx_of(rounds=r, promotion=p, promotion_min_gain=g))
        for r in (1, 4, 8)
        for p in ("possible", "estimated_gain")
        for g in (0.0, 0.002, 0.05)
    }
    ctx = ctx_of()
    before = (
        '{"stages":[0.05,0.1,0.2,0.4,0.7],"min_cases":30,"z":2.0,'
        '"stratify_by":["risky"],"seed":null}'
    )
    digest = hashlib.sha256(f"{ctx.search.digest}:{racing_seed(ctx)}:{before}".encode())
    assert keys == {digest.hexdigest()[:16]}
