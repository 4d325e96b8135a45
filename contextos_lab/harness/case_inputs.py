"""What a harness under test may see of a case: its inputs, never its answer key.

Expectations (expected decision, key evidence, forbidden strings, assertions, injected-attack
labels) and the kit's own bookkeeping (content hashes) stay on the kit's side; every other
field, including ones the kit does not know, is passed through to the harness.
"""

from __future__ import annotations

import pandas as pd

#: Case fields that say what the right outcome is (or how the kit tracks the case).
EXPECTATION_FIELDS: frozenset[str] = frozenset(
    {
        "expected_decision",
        "expected_skill",
        "expected_outcome",
        "expected",
        "expectations",
        "key_evidence",
        "forbidden_strings",
        "injection",
        "assert",
        "assertions",
        "gold",
        "reference_answer",
        "content_hash",
        "case_hash",
        "sha256",
    }
)


def inputs_only(cases: pd.DataFrame, hidden: frozenset[str] = EXPECTATION_FIELDS) -> pd.DataFrame:
    """The cases frame without expectation columns (`case_id` always kept)."""
    drop = [c for c in cases.columns if c in hidden and c != "case_id"]
    return cases.drop(columns=drop)
