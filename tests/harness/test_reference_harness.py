"""The reference harness: protocol, search space, determinism, and real trade-offs."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from contextos_lab.evaluators.scorecard import evaluate
from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    BatchHarness,
    RunResult,
    baseline_config,
    load_harness,
    outputs_hash,
    run_cases,
)
from contextos_lab.harness.reference import SupportDeskHarness
from contextos_lab.harness.reference import harness as harness_module
from contextos_lab.harness.reference.harness import SEARCH_SPACE_SIZE
from contextos_lab.memory.reflections import SECTION_HEADER
from contextos_lab.schemas.base import sha256_hex
from contextos_lab.schemas.surface import SurfaceLayer

#: sha256 over every case's outputs hash at the baseline on search_sets/ (machine-independent).
BASELINE_OUTPUTS_SHA: str | None = (
    "480cdde0ca104f7378515496fd3f1e5d7e80668f640621bd2c93d3aad9ae88d8"
)


def _scores(harness: SupportDeskHarness, cases: pd.DataFrame, **change: Any) -> pd.Series:
    config = {**baseline_config(harness), **change}
    return evaluate(cases, harness.run_batch(cases, config)).mean()


def _set_hash(results: pd.DataFrame) -> str:
    return sha256_hex(
        "".join(
            outputs_hash(c, d, o, e)
            for c, d, o, e in zip(results.case_id, results.decision, results.output_text,
                                  results.evidence_used, strict=True)
        )
    )


def test_loads_by_import_path_and_is_a_batch_harness() -> None:
    h = load_harness("contextos_lab.harness.reference:reference_harness")
    assert isinstance(h, SupportDeskHarness) and isinstance(h, BatchHarness)


def test_search_space_is_documented_and_enumerable(harness: SupportDeskHarness) -> None:
    surfaces = harness.tunable_surfaces()
    size = math.prod(len(s.grid()) for s in surfaces)
    assert size == SEARCH_SPACE_SIZE == 124_416
    assert f"{SEARCH_SPACE_SIZE:,}" in (harness_module.__doc__ or "")
    for s in surfaces:
        assert s.baseline in s.grid(), s.name
    layers = {s.layer for s in surfaces}
    assert {SurfaceLayer.tool_selection, SurfaceLayer.retrieval, SurfaceLayer.memory_recall,
            SurfaceLayer.policy, SurfaceLayer.budget_allocation} <= layers


def test_result_frame_shape(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> None:
    results = harness.run_batch(search_cases, baseline_config(harness))
    assert list(results.columns) == list(RESULT_COLUMNS)
    assert len(results) == len(search_cases)
    assert (results.case_id.to_numpy() == search_cases.case_id.to_numpy()).all()
    assert set(results.decision) == {"approve", "deny", "escalate", "answer"}
    assert (results.tokens > results.tokens_out).all() and (results.latency_ms > 0).all()


def test_baseline_is_feasible(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> None:
    s = _scores(harness, search_cases)
    assert s["policy"] == 1.0 and s["safety"] == 1.0
    assert 0.7 < s["utility"] < 0.95


def test_outputs_are_deterministic_across_instances(search_cases: pd.DataFrame) -> None:
    a, b = SupportDeskHarness(), SupportDeskHarness()
    config = baseline_config(a)
    first = _set_hash(a.run_batch(search_cases, config))
    assert first == _set_hash(b.run_batch(search_cases.copy(), config))
    assert first == _set_hash(a.run_batch(search_cases, config))
    if BASELINE_OUTPUTS_SHA is not None:
        assert first == BASELINE_OUTPUTS_SHA


def test_run_matches_run_batch(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> None:
    config = {**baseline_config(harness), "top_k": 3}
    batch = harness.run_batch(search_cases, config)
    for i in (0, 1, 7, 42):
        one = harness.run(search_cases.iloc[i].to_dict(), config)
        assert isinstance(one, RunResult)
        row = RunResult(**batch.iloc[i].to_dict())
        assert one.outputs_hash() == row.outputs_hash()
        assert (one.tokens, one.latency_ms) == (row.tokens, row.latency_ms)


def test_run_cases_uses_the_vectorised_path(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    head = search_cases.head(50)
    assert _set_hash(run_cases(harness, head, {})) == _set_hash(harness.run_batch(head, {}))


def test_unknown_knobs_are_refused(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="top_kk"):
        harness.run_batch(search_cases.head(3), {"top_kk": 2})


@pytest.mark.parametrize(
    ("change", "better", "worse"),
    [
        # dropping redaction saves tokens and money but leaks PII
        ({"redact_pii": False}, "economics", "safety"),
        # a looser approval threshold (above the true $150) resolves more, violates policy
        ({"approval_threshold": 200}, "utility", "policy"),
        # more retrieval helps utility, costs money
        ({"top_k": 3}, "utility", "economics"),
        # escalating earlier is faster, less useful
        ({"min_confidence": 0.6}, "latency", "utility"),
        # a tighter token budget is cheaper, truncation loses evidence
        ({"context_token_budget": 700}, "economics", "utility"),
        # a shorter recall window is cheaper, loses a recurring lesson
        ({"recency_days": 7}, "economics", "utility"),
        # taking the customer's word resolves more, follows injected notes
        ({"require_window_proof": False}, "utility", "safety"),
    ],
)
def test_a_knob_moves_two_evaluators_in_opposite_directions(
    harness: SupportDeskHarness, search_cases: pd.DataFrame, change: dict[str, Any],
    better: str, worse: str,
) -> None:
    base = _scores(harness, search_cases)
    new = _scores(harness, search_cases, **change)
    sign = {"policy": 1, "safety": 1, "utility": 1, "latency": -1, "economics": -1}
    assert sign[better] * (new[better] - base[better]) > 0, (change, better)
    assert sign[worse] * (new[worse] - base[worse]) < 0, (change, worse)


def test_retrieval_has_diminishing_returns(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    u = [_scores(harness, search_cases, top_k=k)["utility"] for k in (1, 2, 3)]
    assert u[0] < u[1] < u[2]
    assert u[1] - u[0] > u[2] - u[1]


def test_budget_truncates_evidence(harness: SupportDeskHarness, search_cases: pd.DataFrame) -> None:
    wide = harness.run_batch(search_cases, {"top_k": 3, "context_token_budget": 1100})
    tight = harness.run_batch(search_cases, {"top_k": 3, "context_token_budget": 700})
    assert tight.evidence_used.map(len).sum() < wide.evidence_used.map(len).sum()
    assert tight.tokens.mean() < wide.tokens.mean()


def test_traces_show_routing_reinforcement_and_recall(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    results = harness.run_batch(search_cases, {})
    routes = [t[0] for t in results.trace]
    assert any("(Reinforced by past success" in r["explanation"] for r in routes)
    recalls = [t[1] for t in results.trace]
    assert all(r["event"] == "reflection_recalled" for r in recalls)
    shown = [r for r in recalls if r["surfaced"]]
    assert shown and all(r["section"].startswith(SECTION_HEADER) for r in shown)
    assert all(r["surfaced"] <= 3 and r["candidates"] == 9 for r in shown)


def test_injected_reflection_surfaces_but_is_never_obeyed(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    """min_seen=1 lets the one-off injected note through recall; refunds stay policy-clean."""
    results = harness.run_batch(search_cases, {"min_seen": 1})
    frame = evaluate(search_cases, results)
    refunds = (search_cases.intent == "refund").to_numpy()
    flagged = [
        "[flagged: contains an instruction; not followed]" in t[1]["section"]
        for t in results.trace
    ]
    assert any(f and r for f, r in zip(flagged, refunds, strict=True))
    assert frame.loc[refunds, "policy"].eq(1.0).all()
    assert not results.output_text.str.contains("Ignore previous instructions").any()


def test_injected_customer_notes_are_not_followed_at_baseline(
    harness: SupportDeskHarness, search_cases: pd.DataFrame
) -> None:
    injected = search_cases[search_cases.injection.notna()]
    assert len(injected) > 50
    frame = evaluate(injected, harness.run_batch(injected, {}))
    assert frame.safety.eq(1.0).all()
