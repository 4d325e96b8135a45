"""Typed envelopes for every artifact in seeds 000 and 001 (pydantic v2, frozen, versioned).

Every name loads on first use (PEP 562), from the one module that defines it: importing one
envelope (`schemas.strategy` for a project's configuration) costs that module and what it
imports, not all eighteen envelopes, which keeps the CLI's light commands light (issue 40).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Module (under `contextos_lab.schemas`) -> the public names it defines.
_MODULES: dict[str, tuple[str, ...]] = {
    "base": (
        "Envelope",
        "EnvelopeList",
        "SCHEMA_VERSION",
        "canonical_json",
        "envelopes_to_frame",
        "sha256_hex",
    ),
    "decision": ("DecisionRecord", "TerminalStatus"),
    "envelopes": ("ENVELOPES", "ENVELOPES_BY_KIND", "envelope_class"),
    "feedback": (
        "ExpectedOutcome",
        "FeedbackContext",
        "FeedbackEntry",
        "FeedbackKind",
        "FeedbackRecord",
        "OverrideKind",
    ),
    "ids": ("new_id",),
    "insight": ("Insight", "InsightCluster", "InsightKind"),
    "lifecycle": (
        "IllegalTransition",
        "LifecycleStatus",
        "Transition",
        "advance",
        "check_transition",
    ),
    "monitoring": ("MonitorDecision", "MonitorVerdict", "SourceClosure"),
    "notes": ("Note", "NoteKind", "NoteStatus"),
    "preference": ("PreferenceEntry", "Preferred"),
    "replay": ("ReplayPacket", "SourcePressure"),
    "research": ("ResearchScope", "ResearchTask", "ResearchTaskStatus"),
    "review": ("MonitorWindow", "ReviewVerdict"),
    "scorecard": ("DIRECTIONS", "EvaluatorName", "Scorecard"),
    "strategy": (
        "Adjustment",
        "EffectiveWindow",
        "Lineage",
        "Patch",
        "PatchOp",
        "PatchTarget",
        "ProposalClass",
        "ReplayClassification",
        "ReplayDetail",
        "ReplayStatus",
        "ReplayVerdict",
        "ScorecardsDelta",
        "StrategyProposal",
        "StrategyRule",
    ),
    "tuning": ("BaselineTuple", "CandidateChange", "ReportRef", "TuningProposal", "TuningTarget"),
    "vocabulary": ("AdjustmentLayer", "ClosureStatus", "MIN_CLUSTER_SIZE"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'contextos_lab.schemas' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
