"""What a harness under test may see of a case: its declared inputs, never its answer key.

An allow-list decides. It comes from the spec (`input_fields`) or from the case format (`cases
import` writes the inputs its cases declared, `vars`, to `inputs.json` beside the sets; a
case-set loader puts them in `frame.attrs["input_fields"]`). Only without either does the kit
fall back to a deny-list: the kit's expectation fields plus every answer-key-like name
(`expected*`, `gold*`, `label`, `answer`, `ideal`, `reference*`, `solution`, ...), also inside
nested objects (`metadata.expected_decision`). `case_id` is always sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
#: Names that look like an answer key (the fallback when nothing declares the inputs).
ANSWER_KEY_NAME = re.compile(
    r"^(expected|expect|gold|golden|ground_?truth|truth|label|labels|answer|answers|ideal|"
    r"reference|target|targets|solution|solutions|correct|rubric|grader|grading|score|scores)"
    r"(_.*)?$|.*_(answer|answers|label|labels|expected|gold|golden|truth|solution|reference)$",
    re.IGNORECASE,
)
#: The file `cases import` writes beside the sets: `{"input_fields": [...]}`.
INPUTS_FILE = "inputs.json"


def answer_key_like(name: str) -> bool:
    return name in EXPECTATION_FIELDS or bool(ANSWER_KEY_NAME.match(name))


def declared_inputs(case_file: str | Path) -> tuple[str, ...] | None:
    """The input fields the case format declared for a set file (None when it declared none)."""
    path = Path(case_file)
    sidecar = (path if path.is_dir() else path.parent) / INPUTS_FILE
    if not sidecar.is_file():
        return None
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{sidecar}: not JSON ({exc})") from exc
    fields = data.get("input_fields") if isinstance(data, dict) else None
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ValueError(f"{sidecar}: input_fields: must be a list of field names")
    return tuple(fields)


def inputs_only(cases: pd.DataFrame, allowed: Sequence[str] | None = None) -> pd.DataFrame:
    """`case_id` plus the allowed columns (`allowed`, else `cases.attrs["input_fields"]`);
    with neither, every column that does not look like an answer key. Nested keys that look
    like one are dropped either way."""
    allow = allowed if allowed is not None else cases.attrs.get("input_fields")
    if allow is not None:
        allowed_set = set(allow)
        keep = [c for c in cases.columns if c == "case_id" or c in allowed_set]
    else:
        keep = [c for c in cases.columns if c == "case_id" or not answer_key_like(str(c))]
    out = cases[keep].copy()
    for col in out.columns:  # an allowed object may still nest an answer key: drop it
        if out[col].dtype == object:
            out[col] = [_scrub(v) for v in out[col].tolist()]
    return out


def _scrub(value: Any) -> Any:
    """Nested objects without their answer-key-like keys (`metadata.expected_decision`)."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if not answer_key_like(str(k))}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value
