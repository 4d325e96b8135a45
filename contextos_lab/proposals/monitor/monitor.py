"""The post-release monitor window (seed 001): production scorecards after release against the
baseline slice → keep, roll back, supersede or retire, with the evidence.

Per evaluator the two slices' per-decision scores are compared with a two-sided Mann–Whitney U
test (slices are different decisions, so unpaired; scores are bounded and often tied, so
rank-based). An evaluator is "worse" when p < ALPHA and the move is beyond its tolerance:
policy and safety (floors) any drop; utility a drop of more than UTILITY_TOLERANCE; latency and
cost a rise of more than COST_REL_TOLERANCE of the baseline mean. The verdict, first match wins:
1. supersede — a newer released rule patches the same bundle rule;
2. roll back — any evaluator worse, or RECURRENCE_LIMIT or more new corrections of the source
   class signed after release (the fix does not hold);
3. keep (window stays open) — fewer than MIN_SLICE decisions on either side: underpowered;
4. retire — none of the window's decisions fall under the rule (it governs nothing);
5. keep.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from scipy.stats import mannwhitneyu

from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.monitoring import (
    EvaluatorEvidence,
    MonitorDecision,
    MonitorVerdict,
)
from contextos_lab.schemas.scorecard import Scorecard
from contextos_lab.schemas.strategy import StrategyRule

ALPHA = 0.05
UTILITY_TOLERANCE = 0.05
COST_REL_TOLERANCE = 0.20
MIN_SLICE = 20
RECURRENCE_LIMIT = 3
#: Monitor evaluator name → Scorecard field (seed 000 calls economics "cost").
FIELDS = {
    "policy": "policy",
    "safety": "safety",
    "utility": "utility",
    "latency": "latency",
    "cost": "economics",
}


def _evidence(name: str, base: np.ndarray, win: np.ndarray) -> EvaluatorEvidence:
    b, w = float(base.mean()), float(win.mean())
    delta = w - b
    p: float | None = None
    if len(base) and len(win) and not (np.all(base == base[0]) and np.all(win == base[0])):
        p = float(mannwhitneyu(base, win, alternative="two-sided").pvalue)
    significant = p is not None and p < ALPHA
    if name in ("policy", "safety"):
        worse = delta < 0
    elif name == "utility":
        worse = delta < -UTILITY_TOLERANCE
    else:
        worse = delta > COST_REL_TOLERANCE * abs(b)
    return EvaluatorEvidence(
        baseline_mean=b, window_mean=w, delta=delta, p_value=p, worse=bool(worse and significant)
    )


def _covered(rule: StrategyRule, card: Scorecard) -> bool:
    intent = rule.applies_to.get("intent") or rule.release_gate_target
    return intent is None or card.decision_key == intent


def newer_rule_on_same_target(rule: StrategyRule, rules: Sequence[StrategyRule]) -> str | None:
    if rule.patch is None or rule.released_at is None:
        return None
    key = (rule.patch.target_id, rule.patch.body.get("rule_id"))
    for other in rules:
        p = other.patch
        if other.rule_id == rule.rule_id or p is None or other.released_at is None:
            continue
        same = (p.target_id, p.body.get("rule_id")) == key
        if other.active and same and other.released_at > rule.released_at:
            return other.rule_id
    return None


def recurrence_after_release(store: Any, rule: StrategyRule) -> int:
    """Corrections of the source cluster's (decision_key, reason class) signed after release."""
    if rule.lineage is None or rule.released_at is None:
        return 0
    cluster = store.get(InsightCluster, rule.lineage.insight_id)
    if cluster is None:
        return 0
    return sum(
        1
        for fb in store.list(FeedbackEntry)
        if fb.decision_key == cluster.decision_key
        and fb.override_reason_class == cluster.override_reason_class
        and fb.signed_at > rule.released_at
    )


def monitor_window(
    rule: StrategyRule,
    baseline: Sequence[Scorecard],
    window: Sequence[Scorecard],
    *,
    store: Any = None,
    recurrence: int | None = None,
    rules: Sequence[StrategyRule] | None = None,
    at: datetime | None = None,
) -> MonitorVerdict:
    """The verdict for one released rule; with `store`, recurrence and newer rules are read
    from it and the verdict is appended (upstream: the rule)."""
    when = at or datetime.now(UTC)
    if store is not None:
        recurrence = recurrence_after_release(store, rule) if recurrence is None else recurrence
        rules = list(store.list(StrategyRule)) if rules is None else rules
    recurrence = recurrence or 0
    evidence = {
        name: _evidence(
            name,
            np.array([getattr(c, f) for c in baseline], dtype=float),
            np.array([getattr(c, f) for c in window], dtype=float),
        )
        for name, f in FIELDS.items()
        if baseline and window
    }
    matched = sum(_covered(rule, c) for c in window)
    by = newer_rule_on_same_target(rule, rules or [])
    worse = [n for n, e in evidence.items() if e.worse]
    if by:
        verdict, reasons = MonitorDecision.supersede, [f"{by} now patches the same bundle rule"]
    elif worse or recurrence >= RECURRENCE_LIMIT:
        verdict = MonitorDecision.roll_back
        reasons = [f"{n} worse than baseline (p={evidence[n].p_value:.3g})" for n in worse]
        if recurrence >= RECURRENCE_LIMIT:
            reasons.append(f"{recurrence} new corrections of the source class since release")
    elif min(len(baseline), len(window)) < MIN_SLICE:
        verdict = MonitorDecision.keep
        reasons = [f"underpowered: fewer than {MIN_SLICE} decisions per slice; window stays open"]
    elif matched == 0:
        verdict, reasons = MonitorDecision.retire, ["no decision in the window falls under it"]
    else:
        verdict, reasons = MonitorDecision.keep, ["no evaluator worse; no recurrence"]
    seed = canonical_json(
        {"rule": rule.rule_id, "at": when.isoformat(), "v": verdict.value, "n": len(window)}
    )
    result = MonitorVerdict(
        monitor_verdict_id=new_id("mv", at=when, seed=seed),
        rule_id=rule.rule_id,
        proposal_id=rule.proposal_id,
        baseline_ref=rule.pinned_baseline,
        verdict=verdict,
        reasons=tuple(reasons),
        n_baseline=len(baseline),
        n_window=len(window),
        n_window_matched=matched,
        evidence=evidence,
        recurrence=recurrence,
        superseded_by=by,
        thresholds={
            "alpha": ALPHA,
            "utility_tolerance": UTILITY_TOLERANCE,
            "cost_rel_tolerance": COST_REL_TOLERANCE,
            "min_slice": MIN_SLICE,
            "recurrence_limit": RECURRENCE_LIMIT,
        },
        decided_at=when,
    )
    if store is not None:
        store.append(result, upstream=[rule.rule_id])
    return result


def act_on_verdict(
    verdict: MonitorVerdict,
    rule: StrategyRule,
    *,
    store: Any,
    bundles: Any,
    actor: str,
    at: datetime | None = None,
) -> StrategyRule:
    """Carry the verdict out: rollback, retire, supersede, or nothing for keep."""
    from contextos_lab.proposals.release.release import retire, rollback, supersede

    why = f"{verdict.monitor_verdict_id}: " + "; ".join(verdict.reasons)
    if verdict.verdict == MonitorDecision.roll_back:
        return rollback(rule, store=store, bundles=bundles, actor=actor, reason=why, at=at)[0]
    if verdict.verdict == MonitorDecision.retire:
        return retire(rule, store=store, bundles=bundles, actor=actor, reason=why, at=at)
    if verdict.verdict == MonitorDecision.supersede:
        by = verdict.superseded_by or "a newer rule"
        return supersede(rule, by, store=store, actor=actor, at=at)
    return rule
