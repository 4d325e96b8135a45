"""The post-release monitor window (seed 001): production scorecards after release against the
baseline slice → keep, roll back, supersede or retire, with the evidence.

Issue 42: the "worse" decision is a calendar group-sequential test per evaluator (see
`sequential` for the design and `evidence` for the per-evaluator record), valid however often
`monitor` is called, with one error budget for the release shared by the five evaluators and
the recurrence signal. The verdict, first match wins:
1. supersede — a newer released rule patches the same bundle rule;
2. roll back — any evaluator crossed its boundary beyond tolerance, or the corrections of the
   source class since release are both RECURRENCE_LIMIT or more and improbable at the
   pre-release rate (Poisson, RECURRENCE_SHARE split over the window's looks);
3. keep (window stays open) — fewer than MIN_SLICE decisions on either side: underpowered;
4. retire — none of the window's decisions fall under the rule (it governs nothing);
5. keep — "no evidence of harm yet" while the window is open; closed with keep when it ran out.
Each call appends a verdict holding every look so far (upstream: the rule, the window and the
previous verdict), so `lineage` shows the looks; a call that sees no new look, scorecard or
correction returns the stored verdict and writes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from scipy.stats import poisson

from contextos_lab.proposals.monitor import looks as cal
from contextos_lab.proposals.monitor import sequential as seq
from contextos_lab.proposals.monitor.evidence import (
    COST_REL_TOLERANCE,
    FIELDS,
    UTILITY_TOLERANCE,
    sequential_evidence,
)
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.monitoring import (
    EvaluatorEvidence,
    MonitorDecision,
    MonitorLook,
    MonitorVerdict,
)
from contextos_lab.schemas.review import MonitorWindow
from contextos_lab.schemas.scorecard import Scorecard
from contextos_lab.schemas.strategy import StrategyRule

ALPHA = seq.ALPHA
MIN_SLICE = 20
RECURRENCE_LIMIT = 3
__all__ = ["COST_REL_TOLERANCE", "FIELDS", "UTILITY_TOLERANCE", "monitor_window"]


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


def _corrections(store: Any, rule: StrategyRule) -> list[datetime]:
    if rule.lineage is None or rule.released_at is None:
        return []
    cluster = store.get(InsightCluster, rule.lineage.insight_id)
    if cluster is None:
        return []
    return [
        fb.signed_at
        for fb in store.list(FeedbackEntry)
        if fb.decision_key == cluster.decision_key
        and fb.override_reason_class == cluster.override_reason_class
    ]


def recurrence_after_release(store: Any, rule: StrategyRule) -> int:
    """Corrections of the source cluster's (decision_key, reason class) signed after release."""
    return sum(1 for t in _corrections(store, rule) if t > rule.released_at)


def recurrence_p(
    store: Any, rule: StrategyRule, count: int, days: float, baseline_days: int
) -> float:
    """P(≥ count corrections in `days`) at the source class's pre-release daily rate."""
    before = [
        t
        for t in _corrections(store, rule)
        if rule.released_at - timedelta(days=baseline_days) <= t <= rule.released_at
    ]
    expected = len(before) / baseline_days * max(days, 1.0)
    return float(poisson.sf(count - 1, expected)) if count else 1.0


def _fingerprint(cards: Sequence[Scorecard]) -> str:
    return hashlib.sha256("|".join(sorted(c.scorecard_id for c in cards)).encode()).hexdigest()


def monitor_window(
    rule: StrategyRule,
    baseline: Sequence[Scorecard],
    window: Sequence[Scorecard],
    *,
    store: Any = None,
    recurrence: int | None = None,
    rules: Sequence[StrategyRule] | None = None,
    at: datetime | None = None,
    monitor: MonitorWindow | None = None,
    baseline_days: int = 60,
) -> MonitorVerdict:
    """The verdict for one released rule. With `monitor` (its MonitorWindow) the looks are its
    calendar days up to `at`, else the window slice is one look. With `store`, recurrence, newer
    rules and earlier looks are read from it; the verdict is appended unless already there."""
    when = at or datetime.now(UTC)
    n_days = cal.window_days(monitor) if monitor else 1
    done = cal.completed_days(monitor, when) if monitor else 1
    days = cal.by_day(monitor, window, done)
    prev, frozen = cal.recorded(store, monitor.window_id if monitor else None)
    recurrence, rules, rec_p = _recurrence(store, rule, recurrence, rules, done, baseline_days)
    seed = monitor.window_id if monitor else rule.rule_id
    evidence, bounds, zs, used = _evidence(baseline, window, days, frozen, n_days, seed)
    matched = sum(_covered(rule, c) for c in window)
    by = newer_rule_on_same_target(rule, rules or [])
    verdict, reasons = _decide(
        by, evidence, recurrence, rec_p, min(len(baseline), len(window)), matched, done, n_days
    )
    stamp = monitor.opened_at + done * cal.DAY if monitor else when
    cards = [c for d in days for c in d] if monitor else window  # what this verdict saw
    key = {"rule": rule.rule_id, "window": seed, "looks": done, "cards": _fingerprint(cards),
           "n": len(cards), "recurrence": recurrence, "v": verdict.value,
           "at": None if monitor else when.isoformat()}  # fmt: skip
    verdict_id = new_id("mv", at=stamp, seed=canonical_json(key))
    if store is not None and (found := store.find(verdict_id)) is not None:
        return found
    result = MonitorVerdict(
        monitor_verdict_id=verdict_id,
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
        thresholds=_thresholds(),
        decided_at=when,
        window_id=monitor.window_id if monitor else None,
        days=n_days,
        looks=_looks(days, zs, bounds, used, monitor, when),
        window_open=done < n_days if monitor else None,
    )
    if store is not None:  # upstream: the rule, its window, the window's previous verdict
        ups = [rule.rule_id, *([monitor.window_id] if monitor else [])]
        store.append(result, upstream=[*ups, *([prev.monitor_verdict_id] if prev else [])])
    return result


def _recurrence(
    store: Any,
    rule: StrategyRule,
    recurrence: int | None,
    rules: Sequence[StrategyRule] | None,
    done: int,
    baseline_days: int,
) -> tuple[int, Sequence[StrategyRule] | None, float | None]:
    """New corrections of the source class since release, the rules to check for a newer one
    on the same target, and the recurrence's p-value against the baseline rate; read from
    `store` where not given."""
    rec_p: float | None = None
    if store is not None:
        recurrence = recurrence_after_release(store, rule) if recurrence is None else recurrence
        rules = list(store.list(StrategyRule)) if rules is None else rules
        if recurrence and rule.lineage is not None:
            rec_p = recurrence_p(store, rule, recurrence, max(done, 1), baseline_days)
    return recurrence or 0, rules, rec_p


def _evidence(
    baseline: Sequence[Scorecard],
    window: Sequence[Scorecard],
    days: list[list[Scorecard]],
    frozen: list[MonitorLook],
    n_days: int,
    seed: str,
) -> tuple[
    dict[str, EvaluatorEvidence],
    dict[str, list[float | None]],
    dict[str, list[float]],
    dict[str, list[float]],
]:
    """Per evaluator: its sequential evidence, and each look's boundary, Z and alpha spent
    (nothing without both slices)."""
    evidence, bounds, zs, used = {}, {}, {}, {}
    if baseline and window:
        for name in FIELDS:
            evidence[name], bounds[name], zs[name], used[name] = sequential_evidence(
                name, baseline, days, frozen, n_days, seed, window
            )
    return evidence, bounds, zs, used


def _looks(
    days: Sequence[Sequence[Scorecard]],
    zs: dict[str, list[float]],
    bounds: dict[str, list[float | None]],
    used: dict[str, list[float]],
    monitor: MonitorWindow | None,
    when: datetime,
) -> tuple[MonitorLook, ...]:
    """One record per daily look: each evaluator's Z, boundary, alpha spent, and which crossed."""
    return tuple(
        MonitorLook(
            day=k,
            until=(monitor.opened_at + k * cal.DAY) if monitor else when,
            n_window=sum(len(d) for d in days[:k]),
            z={n: zs[n][k - 1] for n in zs if len(zs[n]) >= k},
            boundary={n: bounds[n][k - 1] for n in bounds if len(bounds[n]) >= k},
            spent={n: used[n][k - 1] for n in used if len(used[n]) >= k},
            crossed=tuple(
                n
                for n in zs
                if len(zs[n]) >= k
                and (b := bounds[n][k - 1]) is not None
                and zs[n][k - 1] > b
            ),
        )
        for k in range(1, len(days) + 1)
    )


def _decide(
    by: str | None,
    evidence: dict[str, Any],
    recurrence: int,
    rec_p: float | None,
    smaller_slice: int,
    matched: int,
    done: int,
    n_days: int,
) -> tuple[MonitorDecision, list[str]]:
    """The verdict and its reasons: superseded, then harm (an evaluator worse, or the source
    class recurring), then too few decisions, nothing covered, window closed, still open."""
    worse = [n for n, e in evidence.items() if e.worse]
    recurs = recurrence >= RECURRENCE_LIMIT and (
        rec_p is None or rec_p <= seq.RECURRENCE_SHARE / n_days
    )
    if by:
        return MonitorDecision.supersede, [f"{by} now patches the same bundle rule"]
    if worse or recurs:
        reasons = [
            f"{n} worse than baseline: Z {evidence[n].z:.2f} crossed its boundary on day "
            f"{evidence[n].crossed_day} (sequential p={evidence[n].p_value:.3g}, share "
            f"{evidence[n].alpha_share:g} of alpha {ALPHA:g})"
            for n in worse
        ]
        if recurs:
            reasons.append(f"{recurrence} new corrections of the source class since release")
        return MonitorDecision.roll_back, reasons
    if smaller_slice < MIN_SLICE:
        why = f"underpowered: fewer than {MIN_SLICE} decisions per slice; window stays open"
        return MonitorDecision.keep, [why]
    if matched == 0:
        return MonitorDecision.retire, ["no decision in the window falls under it"]
    if done >= n_days:
        why = f"window closed: no evaluator worse at any of its {n_days} daily looks; keep"
        return MonitorDecision.keep, [why]
    return MonitorDecision.keep, [
        f"no evidence of harm yet: no evaluator worse at {done} of {n_days} daily looks; "
        "no recurrence; window stays open"
    ]


def _thresholds() -> dict[str, float]:
    """The levels and tolerances the verdict was decided with (recorded on it)."""
    return {
        "alpha": ALPHA,
        **{f"alpha_{n}": a for n, a in seq.SHARES.items()},
        "alpha_recurrence": seq.RECURRENCE_SHARE,
        "utility_tolerance": UTILITY_TOLERANCE,
        "cost_rel_tolerance": COST_REL_TOLERANCE,
        "min_slice": MIN_SLICE,
        "recurrence_limit": RECURRENCE_LIMIT,
    }


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
