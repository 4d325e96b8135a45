"""Simulated production scorecards for a released rule — the monitor's benchmark, notebook 06
and tests drive the real monitor with them. The score model (not known to the monitor): policy
0/1 at `policy`, safety 0/1 at `safety`, utility Beta(8, 2) shifted by `utility_shift`,
latency lognormal around 200 ms, cost gamma with mean 0.4 c.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from contextos_lab.proposals.monitor.evidence import FIELDS
from contextos_lab.schemas import Patch, Scorecard, StrategyRule

T0 = datetime(2026, 6, 1, tzinfo=UTC)
#: A decision key of no domain: simulated releases govern one made-up key.
KEY = "simulated.decision"


def bare_rule(released_at: datetime = T0, key: str = KEY) -> StrategyRule:
    """A released policy-patch rule with nothing upstream, for simulated releases."""
    body = {"rule_id": "R_X", "applies_to": {"intent": key}, "then": {"allow": False}}
    return StrategyRule(
        rule_id=f"str_{released_at:%Y_%m_%d}_simulated",
        applies_to={"intent": key},
        patch=Patch(target="policy_bundle", target_id="POLICY_X", op="add", body=body),
        released_at=released_at,
        pinned_baseline="POLICY_X@v1#" + "0" * 12,
    )


def draw(
    rng: np.random.Generator,
    n: int,
    *,
    policy: float = 0.97,
    safety: float = 0.995,
    utility_shift: float = 0.0,
) -> dict[str, np.ndarray]:
    """`n` decisions' scores, by Scorecard field."""
    return {
        "policy": (rng.random(n) < policy).astype(float),
        "safety": (rng.random(n) < safety).astype(float),
        "utility": np.clip(rng.beta(8, 2, n) + utility_shift, 0.0, 1.0),
        "latency": 200.0 * rng.lognormal(0.0, 0.3, n),
        "economics": rng.gamma(4.0, 0.1, n),
    }


def scorecards(
    scores: dict[str, np.ndarray], start: datetime, span: timedelta, tag: str, key: str = KEY
) -> list[Scorecard]:
    """The scores as Scorecards spread evenly over [start, start + span)."""
    n = len(scores["policy"])
    return [
        Scorecard(
            scorecard_id=f"sc_{tag}{i}",
            subject_id=f"t_{tag}{i}",
            decision_key=key,
            computed_at=start + span * (i + 0.5) / max(n, 1),
            **{f: float(scores[f][i]) for f in FIELDS.values()},
        )
        for i in range(n)
    ]
