"""The per-case frames a gate verdict reads: checked, paired and viewed per metric.

Split from `verdict` (which decides): how a missing or non-finite score is counted, which cases
a metric's paired test sees (answered pairs for latency and cost, scored cases for policy), and
the notes that say what policy did not judge.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

#: What an errored run has no value for (harness.repeat_scores.UNMEASURED, kept local: the
#: gate's statistics import nothing from the harness layer).
UNMEASURED = ("latency", "economics")
EVALUATORS = ("policy", "safety", "utility", "latency", "economics")


def binary_view(metric: str, frame: pd.DataFrame) -> np.ndarray:
    """Binary outcome per case: policy/safety 'no violation', utility 'fully correct'; a case
    not scored (NaN, see `policy_pairs`) stays NaN, so the paired test leaves it out."""
    values = frame[metric].to_numpy(dtype=float)
    return np.where(np.isnan(values), np.nan, (values >= 1.0).astype(float))


def same_cases(baseline: pd.DataFrame, candidate: pd.DataFrame) -> pd.DataFrame:
    """The candidate's rows in the baseline's case order; refuses another set of cases."""
    if baseline.index.equals(candidate.index):
        return candidate
    if len(baseline.index.difference(candidate.index)) or len(candidate) != len(baseline):
        raise ValueError("candidate and baseline were not run on the same held-out cases")
    return candidate.reindex(baseline.index)


def answered_pairs(baseline: pd.Series, candidate: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Latency and cost are compared on the cases both sides answered (an errored run has
    neither; its failure already counts on utility, policy and safety). With fewer than two
    such cases an unanswered side takes the other's value: no evidence either way."""
    b, c = baseline.to_numpy(float), candidate.to_numpy(float)
    both = ~np.isnan(b) & ~np.isnan(c)
    if both.sum() >= 2 or both.all():
        return b[both], c[both]
    b2, c2 = np.where(np.isnan(b), c, b), np.where(np.isnan(c), b, c)
    return np.nan_to_num(b2), np.nan_to_num(c2)


def checked_frame(name: str, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Missing floor scores count as violations; a missing latency or cost on a case that
    failed everything (an errored run) is compared on answered cases only (`answered_pairs`);
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
    values = frame["policy"].to_numpy(dtype=float)  # NaN: judged per pair (`policy_pairs`)
    frame["policy"] = np.where(np.isinf(values), 0.0, values)
    # an errored case failed everything it judged (safety, utility 0, policy 0 or unscored):
    # only there may latency and cost be missing
    policy = frame["policy"].to_numpy(dtype=float)
    failed = (frame[["safety", "utility"]] == 0.0).all(axis=1).to_numpy() & (
        (policy == 0.0) | np.isnan(policy)
    )
    gaps = {}
    for m in EVALUATORS:
        values = frame[m].to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if m in UNMEASURED:
            bad &= ~(np.isnan(values) & failed)
        if m == "policy":  # a missing policy is a violation or not scored (`policy_pairs`)
            bad &= ~np.isnan(values)
        if bad.any():
            gaps[m] = int(bad.sum())
    return frame, gaps


def policy_pairs(
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


def unscored_note(
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


def paired_cases(metric: str, baseline: pd.DataFrame, candidate: pd.DataFrame) -> int:
    """How many paired differences the metric's test should see: every case, or for latency and
    cost the cases both sides answered (as `answered_pairs` chooses them), for policy the
    cases it scored (`policy_pairs`)."""
    if metric == "policy":
        return int((baseline[metric].notna() & candidate[metric].notna()).sum())
    if metric not in UNMEASURED:
        return len(baseline)
    b, _ = answered_pairs(baseline[metric], candidate[metric])
    return len(b)
