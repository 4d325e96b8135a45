"""Which artifacts an envelope was derived from, read off its own fields.

The store records these links with every row, so lineage is a walk over stored rows, not a
reconstruction from whatever fields happen to be present later.
"""

from __future__ import annotations

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.feedback import FeedbackEntry, FeedbackRecord
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.monitoring import MonitorVerdict, SourceClosure
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.review import MonitorWindow, ReviewVerdict
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal, StrategyRule


def upstream_ids_of(item: Envelope) -> tuple[str, ...]:
    ids: list[str] = []
    if isinstance(item, FeedbackEntry):
        ids.append(item.decision_record_id)
        if item.supersedes:
            ids.append(item.supersedes)
    elif isinstance(item, FeedbackRecord):
        if item.context.decision_record_id:
            ids.append(item.context.decision_record_id)
    elif isinstance(item, InsightCluster):
        ids.extend(item.feedback_ids)
    elif isinstance(item, StrategyProposal):
        ids.append(item.insight_id)
    elif isinstance(item, ReplayVerdict):
        ids.append(item.proposal_id)
    elif isinstance(item, StrategyRule):
        if item.proposal_id:
            ids.append(item.proposal_id)
        if item.lineage is not None:
            ids.append(item.lineage.insight_id)
            if item.lineage.replay_verdict_id:
                ids.append(item.lineage.replay_verdict_id)
            ids.extend(item.lineage.feedback_ids)
        elif isinstance(item.trigger.get("from_insight"), str):
            ids.append(item.trigger["from_insight"])
    elif isinstance(item, ResearchTask):
        ids.append(item.trigger_insight_id)
    elif isinstance(item, ReviewVerdict):
        ids.append(item.subject_id)
    elif isinstance(item, (MonitorWindow, MonitorVerdict)):
        ids.append(item.rule_id)
    elif isinstance(item, SourceClosure):
        ids.append(item.source_id)
        if item.rule_id:
            ids.append(item.rule_id)
        # evidence_ids may name things outside the store (replay cases), so they are not links.
    return tuple(dict.fromkeys(ids))
