"""Typed envelopes for every artifact in seeds 000 and 001 (pydantic v2, frozen, versioned)."""

from contextos_lab.schemas.base import (
    SCHEMA_VERSION,
    Envelope,
    EnvelopeList,
    canonical_json,
    envelopes_to_frame,
    sha256_hex,
)
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import (
    ExpectedOutcome,
    FeedbackContext,
    FeedbackEntry,
    FeedbackKind,
    FeedbackRecord,
    OverrideKind,
)
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, Insight, InsightCluster, InsightKind
from contextos_lab.schemas.lifecycle import (
    IllegalTransition,
    LifecycleStatus,
    Transition,
    advance,
    check_transition,
)
from contextos_lab.schemas.monitoring import (
    ClosureStatus,
    MonitorDecision,
    MonitorVerdict,
    SourceClosure,
)
from contextos_lab.schemas.notes import Note, NoteKind, NoteStatus
from contextos_lab.schemas.preference import PreferenceEntry, Preferred
from contextos_lab.schemas.replay import ReplayPacket, SourcePressure
from contextos_lab.schemas.research import ResearchScope, ResearchTask, ResearchTaskStatus
from contextos_lab.schemas.review import MonitorWindow, ReviewVerdict
from contextos_lab.schemas.scorecard import DIRECTIONS, EvaluatorName, Scorecard
from contextos_lab.schemas.strategy import (
    Adjustment,
    AdjustmentLayer,
    EffectiveWindow,
    Lineage,
    Patch,
    PatchOp,
    PatchTarget,
    ProposalClass,
    ReplayClassification,
    ReplayDetail,
    ReplayStatus,
    ReplayVerdict,
    ScorecardsDelta,
    StrategyProposal,
    StrategyRule,
)
from contextos_lab.schemas.tuning import (
    BaselineTuple,
    CandidateChange,
    ReportRef,
    TuningProposal,
    TuningTarget,
)

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

__all__ = [
    "DIRECTIONS",
    "ENVELOPES",
    "ENVELOPES_BY_KIND",
    "MIN_CLUSTER_SIZE",
    "SCHEMA_VERSION",
    "Adjustment",
    "AdjustmentLayer",
    "BaselineTuple",
    "CandidateChange",
    "ClosureStatus",
    "DecisionRecord",
    "EffectiveWindow",
    "Envelope",
    "EnvelopeList",
    "EvaluatorName",
    "ExpectedOutcome",
    "FeedbackContext",
    "FeedbackEntry",
    "FeedbackKind",
    "FeedbackRecord",
    "IllegalTransition",
    "Insight",
    "InsightCluster",
    "InsightKind",
    "LifecycleStatus",
    "Lineage",
    "MonitorDecision",
    "MonitorVerdict",
    "MonitorWindow",
    "Note",
    "NoteKind",
    "NoteStatus",
    "OverrideKind",
    "Patch",
    "PatchOp",
    "PatchTarget",
    "PreferenceEntry",
    "Preferred",
    "ProposalClass",
    "ReplayClassification",
    "ReplayDetail",
    "ReplayPacket",
    "ReplayStatus",
    "ReplayVerdict",
    "ReportRef",
    "ResearchScope",
    "ResearchTask",
    "ResearchTaskStatus",
    "ReviewVerdict",
    "Scorecard",
    "ScorecardsDelta",
    "SourceClosure",
    "SourcePressure",
    "StrategyProposal",
    "StrategyRule",
    "TerminalStatus",
    "Transition",
    "TuningProposal",
    "TuningTarget",
    "advance",
    "canonical_json",
    "check_transition",
    "envelope_class",
    "envelopes_to_frame",
    "new_id",
    "sha256_hex",
]
