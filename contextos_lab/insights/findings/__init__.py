"""Only findings that hold are findings: the statistics layer between candidate insights and
what a report shows.

- `families`: one source's statistics are computed on that source's runs alone;
- `fdr`: Benjamini–Hochberg across every tested insight of a source; `standing` says
  finding / exploratory, `confidence` is 1 − q;
- `overlap`: insights standing for (nearly) the same runs are merged into one;
- `checks`: the figures a benchmark reports on this layer.
"""

from contextos_lab.insights.findings.candidate import Candidate, tested_p
from contextos_lab.insights.findings.families import DEFAULT_FAMILY, families, family_of_inputs
from contextos_lab.insights.findings.fdr import ALPHA, control_fdr
from contextos_lab.insights.findings.hold import hold
from contextos_lab.insights.findings.overlap import MERGE_AT, containment, merge_overlapping

__all__ = [
    "ALPHA",
    "DEFAULT_FAMILY",
    "MERGE_AT",
    "Candidate",
    "containment",
    "control_fdr",
    "families",
    "family_of_inputs",
    "hold",
    "merge_overlapping",
    "tested_p",
]
