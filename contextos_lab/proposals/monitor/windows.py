"""The post-release monitor window: opened by release, sliced from stored production scorecards.

Seed 001: "the window compares production scorecard slices against the baseline tuple". The
baseline slice is the rule's decision key scored before release (BASELINE_DAYS back, while the
pinned baseline was live); the window slice is the same key scored from release to the window's
end (or `until`, whichever is first).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from contextos_lab.proposals.monitor.window_days import BASELINE_DAYS, WINDOW_DAYS
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.review import MonitorWindow
from contextos_lab.schemas.scorecard import Scorecard
from contextos_lab.schemas.strategy import StrategyRule

__all__ = [
    "BASELINE_DAYS",
    "WINDOW_DAYS",
    "open_window",
    "rule_decision_key",
    "slices",
    "window_of",
]


def rule_decision_key(rule: StrategyRule) -> str | None:
    key = rule.applies_to.get("intent") or rule.release_gate_target
    return str(key) if key else None


def open_window(store: Any, rule: StrategyRule, *, days: int = WINDOW_DAYS) -> MonitorWindow:
    """Append the window a released rule is watched in (upstream: the rule)."""
    if rule.released_at is None or rule.pinned_baseline is None:
        raise ValueError(f"{rule.rule_id} is not released with a pinned baseline")
    opened = rule.released_at
    window = MonitorWindow(
        window_id=new_id("mw", at=opened, seed=canonical_json([rule.rule_id, opened.isoformat()])),
        rule_id=rule.rule_id,
        proposal_id=rule.proposal_id,
        baseline_ref=rule.pinned_baseline,
        decision_key=rule_decision_key(rule),
        opened_at=opened,
        closes_at=opened + timedelta(days=days),
    )
    store.append(window)
    return window


def window_of(store: Any, rule_id: str) -> MonitorWindow | None:
    found = [w for w in store.list(MonitorWindow) if w.rule_id == rule_id]
    return max(found, key=lambda w: w.opened_at) if found else None


def slices(
    store: Any,
    window: MonitorWindow,
    *,
    baseline_days: int = BASELINE_DAYS,
    until: datetime | None = None,
) -> tuple[list[Scorecard], list[Scorecard]]:
    """(baseline, window) scorecards of the window's decision key, by `computed_at`."""
    end = min(window.closes_at, until or datetime.max.replace(tzinfo=UTC))
    start = window.opened_at - timedelta(days=baseline_days)
    base, win = [], []
    for card in store.list(Scorecard):
        if window.decision_key is not None and card.decision_key != window.decision_key:
            continue
        at = card.computed_at
        if start <= at < window.opened_at:
            base.append(card)
        elif window.opened_at <= at <= end:
            win.append(card)
    return base, win
