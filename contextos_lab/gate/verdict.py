"""Gate verdicts: promote / underpowered / regression / no_effect, each with its reasons.

Inputs are per-case frames (index case_id, one column per evaluator) for the baseline and each
candidate on the same held-out cases. Decision rules (docs/design.md, "Gate semantics"):

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.gate.case_frames import (
    EVALUATORS,
    answered_pairs,
    binary_view,
    checked_frame,
    paired_cases,
    policy_pairs,
    same_cases,
    unscored_note,
)
from contextos_lab.gate.paired_tests import (
    PairedTest,
    holm_adjust,
    mean_of,
    paired_test,
    sample_size,
)

Verdict = Literal["promote", "underpowered", "regression", "no_effect"]
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


def metric_tests(
    baseline: pd.DataFrame, candidate: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000
) -> list[PairedTest]:
    """The per-metric paired tests of one candidate against the baseline on the same cases."""
    candidate = same_cases(baseline, candidate)
    tests = []
    for metric in EVALUATORS:
        if metric in ("policy", "safety"):
            tests.append(
                paired_test(
                    metric,
                    binary_view(metric, baseline),
                    binary_view(metric, candidate),
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
                        binary_view(metric, baseline),
                        binary_view(metric, candidate),
                        binary=True,
                        seed=seed,
                        n_boot=n_boot,
                    )
                )
        else:
            b, c = answered_pairs(baseline[metric], candidate[metric])
            tests.append(paired_test(metric, b, c, binary=False, seed=seed, n_boot=n_boot))
    return tests


def _improves(delta: float, direction: str) -> bool:
    return delta > 0 if direction == "increase" else delta < 0


def _interval_improves(test: PairedTest, direction: str) -> bool:
    """The whole bootstrap interval of the mean delta lies on the improving side."""
    return test.ci_low > 0 if direction == "increase" else test.ci_high < 0


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
    paired = _paired(baseline, candidates, intents)
    all_tests = {
        cid: metric_tests(paired.bases[cid], frame, seed=seed, n_boot=n_boot)
        for cid, frame in paired.candidates.items()
    }
    raw = [_target(tests, target_metric).p_value for tests in all_tests.values()]
    adjusted = dict(zip(all_tests, holm_adjust(raw), strict=True))
    decisions = []
    for cid, tests in all_tests.items():
        target = _target(tests, target_metric)
        frame = paired.candidates[cid].reindex(paired.baseline.index)
        judged = _Judged(target, target_direction, adjusted[cid], level, alpha)
        verdict, reasons, required_n = judged.verdict(
            _breaches(tests, frame, guardrails, alpha),
            _not_computable(
                target, paired.gaps[cid], paired_cases(target_metric, paired.bases[cid], frame)
            ),
            frame,
            paired.bases[cid],
            m=len(paired.candidates),
        )
        decisions.append(
            GateDecision(
                candidate_id=cid,
                verdict=verdict,
                reasons=tuple(reasons),
                target_metric=target_metric,
                target_direction=target_direction,
                target_p_value=target.p_value,
                target_p_adjusted=adjusted[cid],
                tests=tuple(tests),
                required_n=required_n,
                n_cases=len(paired.baseline),
                notes=paired.notes[cid],
            )
        )
    return decisions


def _target(tests: Sequence[PairedTest], metric: str) -> PairedTest:
    return next(t for t in tests if t.metric == metric)


@dataclass(frozen=True)
class _Paired:
    """The baseline and each candidate on the same cases: `bases` is the baseline as paired
    with that candidate (policy: the cases both score), `gaps` the unscored cells each side
    had, `notes` what the decision says of the cases policy does not score."""

    baseline: pd.DataFrame
    bases: dict[str, pd.DataFrame]
    candidates: dict[str, pd.DataFrame]
    gaps: dict[str, dict[str, dict[str, int]]]
    notes: dict[str, tuple[str, ...]]


def _paired(
    baseline: pd.DataFrame,
    candidates: Mapping[str, pd.DataFrame],
    intents: Mapping[str, str] | None,
) -> _Paired:
    baseline, baseline_gaps = checked_frame("baseline", baseline)
    checked = {cid: checked_frame(cid, frame) for cid, frame in candidates.items()}
    bases: dict[str, pd.DataFrame] = {}
    paired: dict[str, pd.DataFrame] = {}
    notes: dict[str, tuple[str, ...]] = {}
    for cid, (frame, _) in checked.items():
        frame = same_cases(baseline, frame)
        bases[cid], paired[cid], unscored = policy_pairs(baseline, frame)
        note = unscored_note("policy", unscored, baseline.index, intents)
        notes[cid] = (note,) if note else ()
    gaps = {
        cid: {k: v for k, v in (("baseline", baseline_gaps), (cid, g)) if v}
        for cid, (_, g) in checked.items()
    }
    return _Paired(baseline, bases, paired, gaps, notes)


@dataclass(frozen=True)
class _Judged:
    """One candidate's target test, its Holm-adjusted p and the levels it is judged at."""

    target: PairedTest
    direction: Literal["increase", "decrease"]
    p_adjusted: float
    level: float
    alpha: float

    def verdict(
        self,
        breaches: list[str],
        blocked: str | None,
        frame: pd.DataFrame,
        base: pd.DataFrame,
        *,
        m: int,
    ) -> tuple[Verdict, list[str], int | None]:
        """(verdict, reasons, required_n): a breach is a regression whatever the target
        says; then a target that cannot be computed, then the target test."""
        t, level = self.target, self.level
        improves = _improves(t.delta, self.direction)
        if breaches:
            return "regression", breaches, None
        if blocked:
            return "underpowered", [blocked], None
        if improves and self.p_adjusted < level and _interval_improves(t, self.direction):
            return "promote", [
                f"{t.metric} {self.direction}s by {t.delta:+.4g} "
                f"(95% CI [{t.ci_low:.4g}, {t.ci_high:.4g}], {t.test}, "
                f"Holm-adjusted p={self.p_adjusted:.3g} < {level:.3g}); every floor and "
                "accepted delta holds on held-out"
            ], None  # fmt: skip
        if improves:
            return self._underpowered(frame, base, m)
        worse = t.p_value < self.alpha
        return "no_effect", [
            f"{t.metric} does not {self.direction}: it "
            + ("worsens significantly" if worse else "does not move significantly")
            + f" (delta {t.delta:+.4g}, 95% CI [{t.ci_low:.4g}, "
            f"{t.ci_high:.4g}], p={t.p_value:.3g})"
        ], None  # fmt: skip

    def _underpowered(
        self, frame: pd.DataFrame, base: pd.DataFrame, m: int
    ) -> tuple[Verdict, list[str], int | None]:
        """Right way, not significant: how many held-out cases a test would need."""
        t, level, name = self.target, self.level, self.target.metric
        diff = (
            binary_view(name, frame) - binary_view(name, base)
            if t.outcome == "binary"
            else frame[name].to_numpy(float) - base[name].to_numpy(float)
        )
        diff = diff[~np.isnan(diff)]  # latency/cost: answered pairs; policy: scored ones
        # Holm's strictest step compares the smallest p with alpha/m: size for that.
        required_n, how = sample_size(diff, alpha=level / m)
        sizing = (
            f"a paired test at alpha/{m} would need about {required_n} held-out cases "
            f"(power 0.8, {how})"
            if required_n is not None
            else f"the held-out size needed is {how}"
        )
        return "underpowered", [
            f"{name} moves the right way ({t.delta:+.4g}, 95% CI "
            f"[{t.ci_low:.4g}, {t.ci_high:.4g}]) but is not significant after "
            f"Holm (adjusted p={self.p_adjusted:.3g}, alpha {level:.3g}); {sizing}"
        ], required_n  # fmt: skip
