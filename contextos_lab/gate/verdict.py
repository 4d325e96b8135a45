"""Gate verdicts: promote / underpowered / regression / no_effect, each with its reasons.

Inputs are per-case frames (index case_id, one column per evaluator) for the baseline and each
candidate on the same held-out cases. Decision rules (DESIGN.md, "Gate semantics"):

- regression: a floor (policy, safety) fails on the candidate's held-out mean, policy or safety
  violations rise significantly (exact McNemar, p < alpha), or an accepted delta for utility,
  latency or economics is exceeded by the observed held-out delta (point estimate: the gate
  never promotes a change whose measured cost already exceeds its allowance);
- promote: the target metric moves the declared way, its Holm-adjusted p < alpha, and the
  bootstrap interval of its mean delta lies wholly on the improving side;
- underpowered: it moves the right way but not significantly; the report carries the held-out
  size a power analysis says would be needed at alpha/m (Holm's strictest step);
- no_effect: it does not move the right way and nothing is breached (a target that worsens
  significantly is said so in the reasons).

Missing policy/safety scores count as violations, with one exception: a case whose policy is
missing on *both* sides of a pair is a case the evaluator does not judge (policy: an intent with
no `policy_evaluation` rule), the same case for every config. Such a case is left out of the
policy floor and McNemar test, and each decision's `notes` say "policy not scored for intents
X, Y" (on how many cases); with no scored case at all, no policy floor or test applies and the
notes say so, never a pass or a breach. A missing or non-finite score of another
metric, or a target no test can be computed for, makes the verdict `underpowered` with a reason
starting "not computable:" (breaches found on the finite cases still make it `regression`): no
statistic raises, and nothing is promoted on numbers that could not be computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.gate.paired_tests import (
    PairedTest,
    holm_adjust,
    mean_of,
    paired_test,
    sample_size,
)

#: What an errored run has no value for (harness.repeat_scores.UNMEASURED, kept local: the
#: gate's statistics import nothing from the harness layer).
UNMEASURED = ("latency", "economics")
Verdict = Literal["promote", "underpowered", "regression", "no_effect"]
EVALUATORS = ("policy", "safety", "utility", "latency", "economics")
#: Reported beside `utility` (never checked against a guardrail): share of fully correct cases.
UTILITY_CORRECT = "utility_correct"
#: Better direction per evaluator ("increase" or "decrease").
BETTER: dict[str, str] = {
    "policy": "increase",
    "safety": "increase",
    "utility": "increase",
    "latency": "decrease",
    "economics": "decrease",
}


class GateGuardrails(BaseModel):
    """Floors and accepted deltas as the run spec declares them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy_floor: float = Field(ge=0, le=1)
    safety_floor: float = Field(ge=0, le=1)
    #: Largest accepted worsening per metric, in the metric's units (>= 0).
    accepted_delta: dict[str, float] = Field(default_factory=dict)


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_id: str
    verdict: Verdict
    reasons: tuple[str, ...]
    target_metric: str
    target_direction: Literal["increase", "decrease"]
    target_p_value: float
    target_p_adjusted: float
    tests: tuple[PairedTest, ...]
    required_n: int | None = None
    n_cases: int
    #: What the verdict does not rest on (e.g. "policy not scored for intents X, Y ...").
    notes: tuple[str, ...] = ()

    def test_for(self, metric: str) -> PairedTest:
        return next(t for t in self.tests if t.metric == metric)


def _binary_view(metric: str, frame: pd.DataFrame) -> np.ndarray:
    """Binary outcome per case: policy/safety 'no violation', utility 'fully correct'; a case
    not scored (NaN, see `_policy_pairs`) stays NaN, so the paired test leaves it out."""
    values = frame[metric].to_numpy(dtype=float)
    return np.where(np.isnan(values), np.nan, (values >= 1.0).astype(float))


def _same_cases(baseline: pd.DataFrame, candidate: pd.DataFrame) -> pd.DataFrame:
    """The candidate's rows in the baseline's case order; refuses another set of cases."""
    if baseline.index.equals(candidate.index):
        return candidate
    if len(baseline.index.difference(candidate.index)) or len(candidate) != len(baseline):
        raise ValueError("candidate and baseline were not run on the same held-out cases")
    return candidate.reindex(baseline.index)


def metric_tests(
    baseline: pd.DataFrame, candidate: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000
) -> list[PairedTest]:
    """The per-metric paired tests of one candidate against the baseline on the same cases."""
    candidate = _same_cases(baseline, candidate)
    tests = []
    for metric in EVALUATORS:
        if metric in ("policy", "safety"):
            tests.append(
                paired_test(
                    metric,
                    _binary_view(metric, baseline),
                    _binary_view(metric, candidate),
                    binary=True,
                    seed=seed,
                    n_boot=n_boot,
                )
            )
        elif metric == "utility":
            # `utility` is the evaluator's mean (partial credit), the quantity the search scored,
            # the spec's accepted delta bounds and a utility target names: one metric, one name
            # in the check, the gate table and the proposal. When every case scores 0 or 1 the
            # mean is the share of correct cases and the exact McNemar test is its paired test;
            # with partial credit the mean gets the paired t-test, and the share of fully
            # correct cases is reported beside it as `utility_correct` (exact McNemar).
            b, c = baseline[metric].to_numpy(float), candidate[metric].to_numpy(float)
            binary = bool(np.isin(b, (0.0, 1.0)).all() and np.isin(c, (0.0, 1.0)).all())
            tests.append(paired_test(metric, b, c, binary=binary, seed=seed, n_boot=n_boot))
            if not binary:
                tests.append(
                    paired_test(
                        UTILITY_CORRECT,
                        _binary_view(metric, baseline),
                        _binary_view(metric, candidate),
                        binary=True,
                        seed=seed,
                        n_boot=n_boot,
                    )
                )
        else:
            b, c = _answered_pairs(baseline[metric], candidate[metric])
            tests.append(paired_test(metric, b, c, binary=False, seed=seed, n_boot=n_boot))
    return tests


def _answered_pairs(baseline: pd.Series, candidate: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Latency and cost are compared on the cases both sides answered (an errored run has
    neither; its failure already counts on utility, policy and safety). With fewer than two
    such cases an unanswered side takes the other's value: no evidence either way."""
    b, c = baseline.to_numpy(float), candidate.to_numpy(float)
    both = ~np.isnan(b) & ~np.isnan(c)
    if both.sum() >= 2 or both.all():
        return b[both], c[both]
    b2, c2 = np.where(np.isnan(b), c, b), np.where(np.isnan(c), b, c)
    return np.nan_to_num(b2), np.nan_to_num(c2)


def _improves(delta: float, direction: str) -> bool:
    return delta > 0 if direction == "increase" else delta < 0


def _interval_improves(test: PairedTest, direction: str) -> bool:
    """The whole bootstrap interval of the mean delta lies on the improving side."""
    return test.ci_low > 0 if direction == "increase" else test.ci_high < 0


def _checked_frame(name: str, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Missing floor scores count as violations; a missing latency or cost on a case that
    failed everything (an errored run) is compared on answered cases only (`_answered_pairs`);
    any other missing or non-finite score is counted.

    A NaN must never make a mean look better than the cases it hides (pandas skips NaN), so
    the counted gaps make the verdict "not computable" instead of a mean over what is left.
    """
    missing = [m for m in EVALUATORS if m not in frame.columns]
    if missing:
        raise ValueError(f"{name}: per-case frame lacks evaluator columns {missing}")
    frame = frame.copy()
    for metric in EVALUATORS:
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce").astype(float)
    values = frame["safety"].to_numpy(dtype=float)
    frame["safety"] = np.where(np.isfinite(values), values, 0.0)
    values = frame["policy"].to_numpy(dtype=float)  # NaN: judged per pair (`_policy_pairs`)
    frame["policy"] = np.where(np.isinf(values), 0.0, values)
    # an errored case failed everything it judged (safety, utility 0, policy 0 or unscored):
    # only there may latency and cost be missing
    policy = frame["policy"].to_numpy(dtype=float)
    failed = (
        (frame[["safety", "utility"]] == 0.0).all(axis=1).to_numpy()
        & ((policy == 0.0) | np.isnan(policy))
    )
    gaps = {}
    for m in EVALUATORS:
        values = frame[m].to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if m in UNMEASURED:
            bad &= ~(np.isnan(values) & failed)
        if m == "policy":  # a missing policy is a violation or not scored (`_policy_pairs`)
            bad &= ~np.isnan(values)
        if bad.any():
            gaps[m] = int(bad.sum())
    return frame, gaps


def _policy_pairs(
    baseline: pd.DataFrame, candidate: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Both frames with a policy missing on one side only made a violation (0), and the mask of
    cases missing on both: not scored (the evaluator cannot judge that case for any config)."""
    b, c = baseline["policy"].to_numpy(float), candidate["policy"].to_numpy(float)
    unscored = np.isnan(b) & np.isnan(c)
    baseline, candidate = baseline.copy(), candidate.copy()
    baseline["policy"] = np.where(np.isnan(b) & ~unscored, 0.0, b)
    candidate["policy"] = np.where(np.isnan(c) & ~unscored, 0.0, c)
    return baseline, candidate, unscored


def _unscored_note(
    metric: str, unscored: np.ndarray, index: pd.Index, intents: Mapping[str, str] | None
) -> str | None:
    """'policy not scored for intents X, Y (k of n held-out cases) ...', or None."""
    k, n = int(unscored.sum()), len(unscored)
    if k == 0:
        return None
    named = ""
    if intents is not None:
        found = sorted({str(intents.get(str(i), "")) for i in index[unscored]} - {""})
        named = f" for intent(s) {', '.join(found)}" if found else ""
    what = (
        f"its floor and McNemar test cover the other {n - k} case(s)"
        if k < n
        else "no policy floor or test applies to this gate"
    )
    return (
        f"{metric} not scored{named} ({k} of {n} held-out case(s): no policy_evaluation rule "
        f"for the intent); {what}"
    )


def _paired_cases(metric: str, baseline: pd.DataFrame, candidate: pd.DataFrame) -> int:
    """How many paired differences the metric's test should see: every case, or for latency and
    cost the cases both sides answered (as `_answered_pairs` chooses them), for policy the
    cases it scored (`_policy_pairs`)."""
    if metric == "policy":
        return int((baseline[metric].notna() & candidate[metric].notna()).sum())
    if metric not in UNMEASURED:
        return len(baseline)
    b, _ = _answered_pairs(baseline[metric], candidate[metric])
    return len(b)


def _not_computable(
    target: PairedTest, gaps: dict[str, dict[str, int]], n_cases: int
) -> str | None:
    """Why the target's verdict cannot be computed, or None when it can."""
    named = [
        f"{who} has {count} missing or non-finite {metric} score(s)"
        for who, by_metric in gaps.items()
        for metric, count in by_metric.items()
    ]
    if named:
        return "not computable: " + "; ".join(named) + "; re-run those cases"
    if n_cases == 0:
        return "not computable: no held-out cases"
    if target.n < n_cases:
        return (
            f"not computable: {n_cases - target.n} paired {target.metric} difference(s) "
            "overflow a float"
        )
    if not (np.isfinite(target.delta) and np.isfinite(target.p_value)):
        return (
            f"not computable: the {target.metric} delta over {target.n} paired case(s) is not "
            "finite"
        )
    return None


def _breaches(
    tests: list[PairedTest], candidate: pd.DataFrame, guardrails: GateGuardrails, alpha: float
) -> list[str]:
    reasons = []
    by_metric = {t.metric: t for t in tests}
    for metric, floor in (("policy", guardrails.policy_floor), ("safety", guardrails.safety_floor)):
        values = candidate[metric].to_numpy(dtype=float)
        values = values[~np.isnan(values)]  # policy: the scored cases only
        if values.size == 0:
            continue  # nothing scored: the floor binds nothing (the decision's notes say so)
        mean = mean_of(values)
        if mean < floor:
            reasons.append(f"{metric} floor breached: held-out mean {mean:.4f} < {floor}")
        t = by_metric[metric]
        if t.delta < 0 and t.p_value < alpha:
            reasons.append(
                f"{metric} violations rose significantly ({t.discordant[0]} cases newly "
                f"violating vs {t.discordant[1]} fixed; McNemar p={t.p_value:.3g})"
                if t.discordant
                else f"{metric} violations rose significantly"
            )
    for metric, allowed in guardrails.accepted_delta.items():
        t = by_metric[metric]  # the same metric the spec, the table and the proposal name
        worsening = -t.delta if BETTER[metric] == "increase" else t.delta
        if worsening > allowed:
            reasons.append(
                f"{metric} accepted delta breached: worsened by {worsening:.4g} "
                f"(allowed {allowed:.4g}; 95% CI of delta [{t.ci_low:.4g}, {t.ci_high:.4g}])"
            )
    return reasons


def decide(
    baseline: pd.DataFrame,
    candidates: Mapping[str, pd.DataFrame],
    *,
    target_metric: str,
    target_direction: Literal["increase", "decrease"],
    guardrails: GateGuardrails,
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int = 2000,
    promote_alpha: float | None = None,
    intents: Mapping[str, str] | None = None,
) -> list[GateDecision]:
    """Verdicts for every candidate, Holm-corrected across candidates on the target metric.

    `promote_alpha` (default `alpha`) is the level the target test must pass: the held-out
    set's error budget hands each gate a smaller one as the set is reused. Regression checks
    stay at `alpha`: a stricter level there would only hide harm. `intents` (case id -> intent)
    names the intents of cases policy does not score in the decisions' notes."""
    level = alpha if promote_alpha is None else promote_alpha
    if target_metric not in BETTER:
        raise ValueError(f"unknown target metric {target_metric!r}; one of {sorted(BETTER)}")
    baseline, baseline_gaps = _checked_frame("baseline", baseline)
    checked = {cid: _checked_frame(cid, frame) for cid, frame in candidates.items()}
    bases: dict[str, pd.DataFrame] = {}
    candidates, notes = {}, {}
    for cid, (frame, _) in checked.items():
        frame = _same_cases(baseline, frame)
        bases[cid], candidates[cid], unscored = _policy_pairs(baseline, frame)
        note = _unscored_note("policy", unscored, baseline.index, intents)
        notes[cid] = (note,) if note else ()
    gaps_of = {
        cid: {k: v for k, v in (("baseline", baseline_gaps), (cid, g)) if v}
        for cid, (_, g) in checked.items()
    }
    all_tests = {
        cid: metric_tests(bases[cid], frame, seed=seed, n_boot=n_boot)
        for cid, frame in candidates.items()
    }
    target_name = target_metric
    raw = [
        next(t for t in tests if t.metric == target_name).p_value for tests in all_tests.values()
    ]
    adjusted = dict(zip(all_tests, holm_adjust(raw), strict=True))
    decisions = []
    for cid, tests in all_tests.items():
        frame, base = candidates[cid].reindex(baseline.index), bases[cid]
        target = next(t for t in tests if t.metric == target_name)
        breaches = _breaches(tests, frame, guardrails, alpha)
        improves = _improves(target.delta, target_direction)
        required_n = None
        blocked = _not_computable(
            target, gaps_of[cid], _paired_cases(target_name, base, frame)
        )
        if breaches:
            verdict: Verdict = "regression"
            reasons = breaches
        elif blocked:
            verdict = "underpowered"
            reasons = [blocked]
        elif improves and adjusted[cid] < level and _interval_improves(target, target_direction):
            verdict = "promote"
            reasons = [
                f"{target_name} {target_direction}s by {target.delta:+.4g} "
                f"(95% CI [{target.ci_low:.4g}, {target.ci_high:.4g}], {target.test}, "
                f"Holm-adjusted p={adjusted[cid]:.3g} < {level:.3g}); every floor and accepted "
                "delta holds on held-out"
            ]
        elif improves:
            verdict = "underpowered"
            diff = (
                _binary_view(target_name, frame) - _binary_view(target_name, base)
                if target.outcome == "binary"
                else frame[target_name].to_numpy(float) - base[target_name].to_numpy(float)
            )
            diff = diff[~np.isnan(diff)]  # latency/cost: answered pairs; policy: scored ones
            # Holm's strictest step compares the smallest p with alpha/m: size for that.
            m = len(candidates)
            required_n, how = sample_size(diff, alpha=level / m)
            sizing = (
                f"a paired test at alpha/{m} would need about {required_n} held-out cases "
                f"(power 0.8, {how})"
                if required_n is not None
                else f"the held-out size needed is {how}"
            )
            reasons = [
                f"{target_name} moves the right way ({target.delta:+.4g}, 95% CI "
                f"[{target.ci_low:.4g}, {target.ci_high:.4g}]) but is not significant after "
                f"Holm (adjusted p={adjusted[cid]:.3g}, alpha {level:.3g}); {sizing}"
            ]
        else:
            verdict = "no_effect"
            worse = target.p_value < alpha
            reasons = [
                f"{target_name} does not {target_direction}: it "
                + ("worsens significantly" if worse else "does not move significantly")
                + f" (delta {target.delta:+.4g}, 95% CI [{target.ci_low:.4g}, "
                f"{target.ci_high:.4g}], p={target.p_value:.3g})"
            ]
        decisions.append(
            GateDecision(
                candidate_id=cid,
                verdict=verdict,
                reasons=tuple(reasons),
                target_metric=target_name,
                target_direction=target_direction,
                target_p_value=target.p_value,
                target_p_adjusted=adjusted[cid],
                tests=tuple(tests),
                required_n=required_n,
                n_cases=len(baseline),
                notes=notes[cid],
            )
        )
    return decisions
