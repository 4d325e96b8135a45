"""Mechanism clusters as Insights, so routing and the research queue see them like any other.

Every run of such a cluster failed, so there is no rate to contrast: support is the cluster's
share of the failed runs (Wilson interval) and the insight says it has no successful baseline.
The spec names rule `mechanism`, which no run rule recounts on held-out (the gate then treats it
as untestable, as it does feedback clusters).
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.insights.support import share_of_failures
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import Insight, InsightKind

RULE = (
    "failed runs attributed from trace content (the default attributor names the agent and "
    "the decisive step) grouped by mechanism: the blamed role, what the step does, the "
    "orchestrator's loop/stall flags, the ending and the action diff's shape where ground "
    "truth exists; never by an annotation"
)


def mechanism_insights(
    clusters: pd.DataFrame, runs: pd.DataFrame, min_size: int, split: SplitSpec | None = None
) -> list[tuple[Insight, frozenset[str]]]:
    """One Insight per mechanism cluster of at least `min_size` runs ("other" excluded), with
    every run it stands for (the statistics layer merges on those)."""
    failed = int(runs["failed"].sum()) if "failed" in runs else 0
    by_id = runs.set_index("record_id")
    out = []
    for row in clusters.itertuples(index=False):
        if row.size < min_size or not row.mechanism:
            continue
        members = by_id.loc[list(row.members)]
        times = pd.to_datetime(members["decided_at"], utc=True)
        first: datetime = times.min().to_pydatetime()
        last: datetime = times.max().to_pydatetime()
        spec = {
            "rule": "mechanism",
            "kind": InsightKind.failure_cluster.value,
            "key": row.mechanism,
        }
        share = share_of_failures(int(row.size), failed)
        insight = Insight(
            insight_id=new_id("ins", at=last, seed=canonical_json(spec)),
            kind=InsightKind.failure_cluster,
            intent=str(members["decision_key"].mode().iloc[0]),
            pattern=row.title,
            occurrences=int(row.size),
            first_seen=first,
            last_seen=last,
            evidence_refs=tuple(row.members[:50]),
            confidence=float(share["share_ci95"][0]),
            support={
                **share,
                "exploratory": True,
                "rule": RULE,
                "source": "attribution",
                "spec": spec,
                "key": row.mechanism,
                "agent": row.agent,
                "agent_share": row.agent_share,
                "low_confidence_members": int(getattr(row, "low_confidence", 0) or 0),
                "split": {
                    "discovered_on": SEARCH,
                    **(split.to_dict() if split else {"heldout_fraction": 0.0}),
                },
            },
        )
        out.append((insight, frozenset(row.members)))
    return out


__all__ = ["RULE", "mechanism_insights"]
