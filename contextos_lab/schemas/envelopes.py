"""Every envelope by class name and by store kind: what `contextos-lab schema` writes and the
experience store accepts. Importing this module loads every envelope (the others load one)."""

from __future__ import annotations

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry, FeedbackRecord
from contextos_lab.schemas.insight import Insight, InsightCluster
from contextos_lab.schemas.monitoring import MonitorVerdict, SourceClosure
from contextos_lab.schemas.notes import Note
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.schemas.replay import ReplayPacket
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.review import MonitorWindow, ReviewVerdict
from contextos_lab.schemas.scorecard import Scorecard
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal, StrategyRule
from contextos_lab.schemas.tuning import TuningProposal

#: Every envelope, by class name: what `contextos-lab schema` writes and the store accepts.
ENVELOPES: dict[str, type[Envelope]] = {
    m.__name__: m
    for m in (
        FeedbackEntry,
        FeedbackRecord,
        InsightCluster,
        Insight,
        StrategyProposal,
        ReplayVerdict,
        StrategyRule,
        Note,
        ResearchTask,
        TuningProposal,
        ReplayPacket,
        DecisionRecord,
        Scorecard,
        MonitorVerdict,
        SourceClosure,
        PreferenceEntry,
        ReviewVerdict,
        MonitorWindow,
    )
}
#: The same, by experience-store kind.
ENVELOPES_BY_KIND: dict[str, type[Envelope]] = {m.store_kind: m for m in ENVELOPES.values()}


def envelope_class(kind: str | type[Envelope]) -> type[Envelope]:
    """The envelope a lookup names: the class, its name (`"FeedbackEntry"`) or its store kind
    (`"feedback_entry"`). An unknown name is an error, never an empty result."""
    if isinstance(kind, type) and issubclass(kind, Envelope):
        return kind
    found = ENVELOPES.get(str(kind)) or ENVELOPES_BY_KIND.get(str(kind))
    if found is None:
        raise ValueError(
            f"unknown artifact kind {kind!r}; one of {sorted(ENVELOPES)} "
            f"(or their store kinds {sorted(ENVELOPES_BY_KIND)})"
        )
    return found
