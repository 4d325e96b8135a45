"""The reference desk's tunable surfaces, their grid size, and resolving a config against them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextos_lab.schemas.surface import ChangeClass, SurfaceLayer, TunableSurface

#: The harness's name (`SupportDeskHarness.name`), also named in config errors.
HARNESS_NAME = "reference-support-desk"

SURFACES: tuple[TunableSurface, ...] = (
    TunableSurface(
        name="feedback_step",
        layer=SurfaceLayer.tool_selection,
        kind="float",
        low=0.1,
        high=0.2,
        step=0.1,
        baseline=0.1,
        change_class=ChangeClass.control_flow,
        description="routing boost per recorded success (seed 002: 0.1)",
    ),
    TunableSurface(
        name="feedback_clamp",
        layer=SurfaceLayer.tool_selection,
        kind="float",
        low=0.1,
        high=0.3,
        step=0.2,
        baseline=0.3,
        change_class=ChangeClass.control_flow,
        description="|boost| bound (seed 002: 0.3)",
    ),
    TunableSurface(
        name="feedback_decay",
        layer=SurfaceLayer.tool_selection,
        kind="float",
        low=0.9,
        high=0.99,
        step=0.09,
        baseline=0.99,
        change_class=ChangeClass.control_flow,
        description="multiplier per boost read (seed 002: 0.99)",
    ),
    TunableSurface(
        name="min_confidence",
        layer=SurfaceLayer.tool_selection,
        kind="float",
        low=0.3,
        high=0.6,
        step=0.15,
        baseline=0.45,
        change_class=ChangeClass.control_flow,
        description="below this routing confidence, escalate to a human",
    ),
    TunableSurface(
        name="top_k",
        layer=SurfaceLayer.retrieval,
        kind="int",
        low=1,
        high=3,
        step=1,
        baseline=2,
        change_class=ChangeClass.additive,
        description="documents retrieved",
    ),
    TunableSurface(
        name="max_hops",
        layer=SurfaceLayer.retrieval,
        kind="int",
        low=1,
        high=3,
        step=1,
        baseline=2,
        change_class=ChangeClass.additive,
        description="link depth (receipts and IDV at 2, history at 3)",
    ),
    TunableSurface(
        name="recency_days",
        layer=SurfaceLayer.memory_recall,
        kind="int",
        low=7,
        high=14,
        step=7,
        baseline=14,
        change_class=ChangeClass.additive,
        description="reflection recency window (seed 004: ~14 days)",
    ),
    TunableSurface(
        name="min_seen",
        layer=SurfaceLayer.memory_recall,
        kind="int",
        low=1,
        high=3,
        step=1,
        baseline=2,
        change_class=ChangeClass.additive,
        description="persistence gate (seed 004: 2)",
    ),
    TunableSurface(
        name="recall_cap",
        layer=SurfaceLayer.memory_recall,
        kind="int",
        low=1,
        high=3,
        step=2,
        baseline=3,
        change_class=ChangeClass.additive,
        description="reflections surfaced per turn (seed 004: 3)",
    ),
    TunableSurface(
        name="approval_threshold",
        layer=SurfaceLayer.policy,
        kind="int",
        low=100,
        high=200,
        step=50,
        baseline=100,
        change_class=ChangeClass.control_flow,
        description="auto-approve refunds up to this amount (true limit $150)",
    ),
    TunableSurface(
        name="require_window_proof",
        layer=SurfaceLayer.policy,
        kind="bool",
        baseline=True,
        change_class=ChangeClass.control_flow,
        description="refunds need the order record and proof of purchase",
    ),
    TunableSurface(
        name="require_idv",
        layer=SurfaceLayer.policy,
        kind="bool",
        baseline=True,
        change_class=ChangeClass.control_flow,
        description="account changes need the IDV record in context",
    ),
    TunableSurface(
        name="redact_pii",
        layer=SurfaceLayer.policy,
        kind="bool",
        baseline=True,
        change_class=ChangeClass.additive,
        description="mask PII in quoted records (costs tokens and a pass)",
    ),
    TunableSurface(
        name="context_token_budget",
        layer=SurfaceLayer.budget_allocation,
        kind="int",
        low=700,
        high=1100,
        step=400,
        baseline=1100,
        change_class=ChangeClass.additive,
        description="context tokens; evidence past it is truncated",
    ),
)
SEARCH_SPACE_SIZE = 124_416


def resolve_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Baseline for missing knobs; unknown knobs are refused (a typo must not pass silently)."""
    unknown = set(config) - {s.name for s in SURFACES}
    if unknown:
        raise KeyError(f"unknown config keys for {HARNESS_NAME}: {sorted(unknown)}")
    cfg = {s.name: s.baseline for s in SURFACES}
    cfg.update(config)
    cfg["feedback_step"] = round(float(cfg["feedback_step"]), 6)
    cfg["feedback_clamp"] = round(float(cfg["feedback_clamp"]), 6)
    cfg["feedback_decay"] = round(float(cfg["feedback_decay"]), 6)
    for name in (
        "top_k",
        "max_hops",
        "recency_days",
        "min_seen",
        "recall_cap",
        "context_token_budget",
    ):
        cfg[name] = int(cfg[name])
    return cfg
