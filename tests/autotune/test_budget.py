"""Budget stops: calls, money and wall time, counted from what trials recorded they paid."""

from __future__ import annotations

import optuna
import pandas as pd
import pytest

from contextos_lab.autotune.budget import (
    Budget,
    Prices,
    budget_stop_reason,
    spend_frame,
    spend_total,
    usd_per_call_estimate,
)


def _study(spends: list[dict[str, float]]) -> optuna.Study:
    study = optuna.create_study()
    for spend in spends:
        trial = study.ask()
        trial.set_user_attr("spend", {"cache_hits": 0, "errors": 0, **spend})
        study.tell(trial, 0.0)
    return study


def test_calls_budget_stops_before_the_next_trial_could_exceed() -> None:
    study = _study([{"calls": 100, "usd": 0.0, "wall_s": 1.0}] * 3)
    assert budget_stop_reason(study, Budget(calls=400), 100) is None
    assert "call budget" in str(budget_stop_reason(study, Budget(calls=399), 100))


def test_calls_budget_estimates_from_the_calls_trials_made_not_the_worst_case() -> None:
    # racing: most trials stop after a few cases; a full trial could make 400 calls
    raced = [{"calls": c, "usd": 0.0, "wall_s": 1.0} for c in (40, 40, 80, 40, 400, 40)]
    study = _study(raced)  # 640 calls spent
    # the median of what they made is 40 calls (a trial that would cross the budget stops at
    # its next stage, autotune.spend_guard): 640 + 40 fits 680, not 679
    assert budget_stop_reason(study, Budget(calls=680), 400) is None
    reason = str(budget_stop_reason(study, Budget(calls=679), 400))
    assert "call budget: 640 of 679" in reason and "about 40" in reason and "up to 400" in reason
    # with fewer than three trials paid, the worst case stands in
    two = _study(raced[:2])
    assert "up to 400" in str(budget_stop_reason(two, Budget(calls=479), 400))
    assert budget_stop_reason(two, Budget(calls=480), 400) is None


def test_money_budget_estimates_from_the_trials_already_paid() -> None:
    study = _study(
        [{"calls": 100, "usd": 1.0, "wall_s": 1.0}, {"calls": 0, "usd": 0.0, "wall_s": 0}]
    )
    # spent $1 at $0.01 a call; the next trial: 100 calls x $0.01 = $1 (not 2 x the dearest)
    assert budget_stop_reason(study, Budget(usd=2.0), 100) is None
    assert "money budget" in str(budget_stop_reason(study, Budget(usd=1.99), 100))
    # a hard bound per call prices the guard's batches, not the start: the start as paid
    assert budget_stop_reason(study, Budget(usd=2.0, usd_per_call_max=0.011), 100) is None
    assert budget_stop_reason(study, Budget(usd=1.99, usd_per_call_max=0.011), 100) is not None


def test_one_dear_trial_does_not_set_the_estimate() -> None:
    cheap = {"calls": 100, "usd": 1.0, "wall_s": 1.0}
    study = _study([cheap] * 9 + [{"calls": 100, "usd": 5.0, "wall_s": 1.0}])
    estimate = usd_per_call_estimate(spend_frame(study))
    assert 0.01 < estimate < 0.05  # the 90th percentile sits between the cheap and the dear
    spent = 14.0  # the next trial starts at the median of what trials spent: $1
    assert budget_stop_reason(study, Budget(usd=spent + 1.0), 100) is None
    reason = budget_stop_reason(study, Budget(usd=spent + 0.99), 100)
    assert reason is not None and "$1.0000 (the 50% quantile of what 10 paid trials" in reason


def test_a_racing_study_starts_trials_at_what_trials_paid_not_the_full_set() -> None:
    # racing: nine trials dropped after 30 cases ($0.30), one completed 300 ($3.00)
    study = _study([{"calls": 30, "usd": 0.3, "wall_s": 1.0}] * 9 + [
        {"calls": 300, "usd": 3.0, "wall_s": 1.0}])  # fmt: skip
    spent = 5.7
    # priced at the full set ($3) the study would stop $2.70 early; at the median it goes on
    assert budget_stop_reason(study, Budget(usd=spent + 0.3), 300) is None
    assert budget_stop_reason(study, Budget(usd=spent + 0.29), 300) is not None


def test_wall_budget_and_totals() -> None:
    study = _study(
        [{"calls": 10, "usd": 0.5, "wall_s": 4.0}, {"calls": 10, "usd": 0.5, "wall_s": 6.0}]
    )
    assert budget_stop_reason(study, Budget(wall_s=16.5), 10) is None
    assert "wall-time" in str(budget_stop_reason(study, Budget(wall_s=15.0), 10))
    assert spend_total(study) == {
        "trials": 2, "calls": 20, "usd": 1.0, "wall_s": 10.0, "cache_hits": 0,
    }  # fmt: skip
    assert list(spend_frame(study)["calls"]) == [10, 10]


def test_prices_and_budget_validation() -> None:
    results = pd.DataFrame({"tokens": [1_000_000, 0], "tokens_out": [250_000, 0]})
    usd = Prices(usd_per_1m_input=2.0, usd_per_1m_output=8.0, usd_per_call=0.5).usd(results)
    assert usd.tolist() == [pytest.approx(1.5 + 2.0 + 0.5), 0.5]
    with pytest.raises(ValueError, match="at least one"):
        Budget()


def test_a_trial_whose_first_batch_cannot_be_paid_is_not_started() -> None:
    # trials paid $0.5-$1.0 for 100 calls; the median start ($0.8) fits $1 more, but a
    # full-fidelity trial's one batch of 100 calls at the dearest price seen ($0.01) does not
    study = _study([{"calls": 100, "usd": u, "wall_s": 1.0} for u in (0.5, 0.8, 1.0)])
    assert budget_stop_reason(study, Budget(usd=2.3 + 0.9), 100) is None
    reason = budget_stop_reason(study, Budget(usd=2.3 + 0.9), 100, first_batch=100)
    assert reason is not None and "its first 100 calls" in reason
    assert budget_stop_reason(study, Budget(usd=2.3 + 0.9), 100, first_batch=80) is None


def test_a_hard_price_bound_does_not_price_the_start_at_a_full_set_of_dearest_calls() -> None:
    """`usd_per_call_max` priced a whole trial at 582 dearest calls ($11.64) until three trials
    had paid: a $12 racing study of the stand-in stopped after its $0.50 baseline. The bound
    is the guard's, per batch; a start is priced as calls were paid."""
    bounded = Budget(usd=12.0, usd_per_call_max=0.02)
    study = _study([{"calls": 582, "usd": 0.5, "wall_s": 1.0}])
    assert budget_stop_reason(study, bounded, 582) is None
    # the first batch is still priced at the bound: 29 calls at $0.02 do not fit $0.55 left
    assert budget_stop_reason(study, bounded.model_copy(update={"usd": 1.05}), 582, 29)
    assert budget_stop_reason(study, bounded.model_copy(update={"usd": 1.10}), 582, 29) is None
