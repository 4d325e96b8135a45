"""Evaluate results against the simple case format's assertions (`harness.case_format`).

Per case: utility = share of its utility assertions that hold (1.0 when it has none);
policy and safety = 1.0 when every assertion of that metric holds, else 0.0; latency = the
harness's latency_ms; economics = cents from tokens at the default price table (a spec's
`prices` replace it). Domain-free: it reads only `assert` (or, without it, `expected_decision` and
`forbidden_strings`), `output_text` and `decision`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.evaluators.economics import EconomicsEvaluator
from contextos_lab.evaluators.frames import aligned


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _json_at(text: str, path: str) -> tuple[bool, Any]:
    try:
        node: Any = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return False, None
    for part in path.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def holds(assertion: Mapping[str, Any], output: str, decision: str) -> bool:
    """Does one assertion hold for one result?"""
    text = decision if assertion.get("target") == "decision" else output
    kind, value = assertion["type"], assertion.get("value")
    if kind == "equals":
        return text.strip() == str(value).strip()
    if kind == "contains":
        return str(value) in text
    if kind == "icontains":
        return str(value).lower() in text.lower()
    if kind == "not-contains":
        return str(value) not in text
    if kind == "regex":
        return _regex(str(value)).search(text) is not None
    if kind == "is-json":
        return _is_json(text)
    if kind == "json-field":
        found, got = _json_at(text, str(assertion.get("path", "")))
        return found and (got == value or str(got) == str(value))
    raise ValueError(f"unknown assertion type {kind!r}")


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return False
    return True


def _scores(asserts: Sequence[Mapping[str, Any]], output: str, decision: str) -> tuple[float, ...]:
    by_metric: dict[str, list[bool]] = {"utility": [], "policy": [], "safety": []}
    for a in asserts or ():
        by_metric[a.get("metric", "utility")].append(holds(a, output, decision))
    util = by_metric["utility"]
    return (
        float(all(by_metric["policy"])),
        float(all(by_metric["safety"])),
        float(np.mean(util)) if util else 1.0,
    )


def case_assertions(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A case's assertions; a case without `assert` is judged by the common expectation
    fields instead (`expected_decision` equals the decision, `forbidden_strings` absent)."""
    given = case.get("assert")
    if isinstance(given, (list, tuple)):
        return list(given)
    out: list[Mapping[str, Any]] = []
    expected = case.get("expected_decision")
    if isinstance(expected, str) and expected:
        out.append({"type": "equals", "target": "decision", "value": expected})
    forbidden = case.get("forbidden_strings")
    if isinstance(forbidden, (list, tuple)):
        out.extend({"type": "not-contains", "value": s, "metric": "safety"} for s in forbidden)
    return out


def evaluate(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """case_id × evaluator frame (index case_id, in the cases' order)."""
    res = aligned(cases, results)
    fields = [c for c in ("assert", "expected_decision", "forbidden_strings") if c in cases]
    records = cases[fields].to_dict(orient="records") if fields else [{}] * len(cases)
    rows = [
        _scores(case_assertions(rec), str(o or ""), str(d or ""))
        for rec, o, d in zip(records, res["output_text"], res["decision"], strict=True)
    ]
    frame = pd.DataFrame(
        rows,
        columns=["policy", "safety", "utility"],
        index=pd.Index(cases["case_id"], name="case_id"),
    )
    frame["latency"] = res["latency_ms"].to_numpy(dtype=float)
    frame["economics"] = EconomicsEvaluator().score(cases, results).to_numpy()
    return frame[["policy", "safety", "utility", "latency", "economics"]]
