"""The envelopes' closed vocabularies that commands and a project's configuration name, as plain
enums and numbers.

No pydantic here: `release --help`, `close --help` and `cluster --help` list these choices and
defaults without loading an envelope, and loading a project (`domain.config`, which every
command does) needs no strategy envelopes for its layer names (issue 40). The envelope modules
re-export them.
"""

from __future__ import annotations

from enum import StrEnum

#: Seed 000: "Five corrections is enough to claim a pattern ... Tune up, never down."
MIN_CLUSTER_SIZE = 5


class ReviewRole(StrEnum):
    compliance = "compliance"
    reliability = "reliability"
    security = "security"


class ReviewOutcome(StrEnum):
    approve = "approve"
    reject = "reject"
    request_changes = "request_changes"


class ClosureStatus(StrEnum):
    fixed = "fixed"
    still_failing = "still_failing"
    invalid = "invalid"
    superseded = "superseded"


class AdjustmentLayer(StrEnum):
    prompt = "prompt"
    planner = "planner"
    retrieval = "retrieval"
    tool_selection = "tool_selection"
    memory_recall = "memory_recall"
    budget_allocation = "budget_allocation"
