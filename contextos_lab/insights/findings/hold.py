"""What a report shows: FDR across each source's candidates, then overlapping ones merged."""

from __future__ import annotations

from collections.abc import Sequence

from contextos_lab.insights.findings.candidate import Candidate
from contextos_lab.insights.findings.fdr import ALPHA, control_fdr
from contextos_lab.insights.findings.overlap import merge_overlapping
from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.insight import Insight


def hold(candidates: Sequence[Candidate], alpha: float = ALPHA) -> EnvelopeList[Insight]:
    """Every tested candidate counts in its source's BH family; merging comes after, so a
    merged-away test still raised the bar for the others."""
    held = merge_overlapping(control_fdr(candidates, alpha))
    return EnvelopeList([c.insight for c in held], Insight)
