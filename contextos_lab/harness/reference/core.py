"""One config on prepared cases, as arrays: route, recall, retrieve, decide, modelled cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from contextos_lab.harness.reference import policy as rules
from contextos_lab.harness.reference.knowledge_base import REFERENCE_NOW, SKILLS
from contextos_lab.harness.reference.policy import Variant
from contextos_lab.harness.reference.prepared import ABSENT_RANK, KIND_INDEX, Prepared
from contextos_lab.harness.reference.router import route_table
from contextos_lab.harness.reference.seed_memory import SEED_REFLECTIONS, boost_table
from contextos_lab.memory.reflections import Reflection, select

SYSTEM_TOKENS = 350
REDACT_TOKENS, REDACT_PER_PII = 60, 20
LAT_BASE, LAT_PER_IN, LAT_PER_OUT = 150.0, 0.05, 12.0
LAT_PER_HOP, LAT_PER_LOOKUP, LAT_RECALL, LAT_REDACT = 40.0, 40.0, 10.0, 25.0
#: The reflection effects the desk is willing to act on (an injected note's effect never is).
_LOOKUPS = {"lookup_history": "history", "lookup_order": "order", "lookup_idv": "idv"}


@dataclass(frozen=True)
class Core:
    """What one config did on prepared cases, as arrays (before any frame is built)."""

    cfg: dict[str, Any]
    q_skill: np.ndarray
    q_conf: np.ndarray
    q_boost: np.ndarray
    q_expl: list[str]
    surfaced: tuple[tuple[Reflection, ...], ...]
    n_candidates: int
    routed: np.ndarray
    variant: np.ndarray
    decision: np.ndarray
    in_context: np.ndarray
    tokens_in: np.ndarray
    tokens_out: np.ndarray
    latency: np.ndarray
    redact: bool


@lru_cache(maxsize=256)
def _recall(
    groups: tuple[tuple[str, ...], ...], recency_days: int, min_seen: int, cap: int
) -> tuple[tuple[tuple[Reflection, ...], ...], int]:
    """Seed-004 recall per entity group (same turn entities -> same reflections)."""
    store = tuple(sr.reflection for sr in SEED_REFLECTIONS)
    out = tuple(
        select(
            store,
            frozenset(g),
            REFERENCE_NOW,
            recency_days=recency_days,
            min_seen=min_seen,
            cap=cap,
        ).surfaced
        for g in groups
    )
    return out, len(store)


_EFFECTS = {sr.reflection.fingerprint: sr.effect for sr in SEED_REFLECTIONS}


def run_core(p: Prepared, cfg: Mapping[str, Any]) -> Core:
    """One config on prepared cases, as arrays (everything `run_batch` reports is derived from
    this; `scoring.py` scores it without building a frame). `cfg` is `resolve_config`d."""
    # routing (seed 002): a read-free snapshot of the store replayed with these knobs
    boosts = boost_table(cfg["feedback_step"], cfg["feedback_clamp"], cfg["feedback_decay"])
    q_skill, q_conf, q_boost, q_expl = route_table(
        p.queries, boosts, cfg["min_confidence"], p.lexical
    )
    skill = q_skill[p.query_idx]
    routed = skill >= 0
    mem = _Memory.recall(p, cfg, routed)
    redact = bool(cfg["redact_pii"])
    fixed = SYSTEM_TOKENS + p.request_tokens + mem.tokens + (REDACT_TOKENS if redact else 0)
    kept = _retrieve(p, cfg, routed, fixed, redact)
    # look-ups a recalled reflection suggested (outside the retrieval budget)
    looked = np.zeros_like(kept)
    for kind, mask in mem.look.items():
        k = KIND_INDEX[kind]
        looked[:, k] = mask & p.present[:, k] & ~kept[:, k]
    in_context = kept | looked
    variant = _variants(p, cfg, in_context, routed & (skill == p.remit), mem)
    variant[~routed] = Variant.esc_low_confidence
    # cost model
    ev_tokens = (np.where(in_context, p.tokens, 0)).sum(axis=1)
    pii_docs = (in_context & p.pii).sum(axis=1)
    tokens_in = fixed + ev_tokens + (REDACT_PER_PII * pii_docs if redact else 0)
    tokens_in = np.where(routed, tokens_in, SYSTEM_TOKENS + p.request_tokens)
    tokens_out = rules.VARIANT_OUT_TOKENS[variant]
    hops = np.where(routed, cfg["max_hops"], 0)
    latency = (
        LAT_BASE
        + LAT_PER_IN * tokens_in
        + LAT_PER_OUT * tokens_out
        + LAT_PER_HOP * hops
        + LAT_PER_LOOKUP * looked.sum(axis=1)
        + np.where(routed, LAT_RECALL + (LAT_REDACT if redact else 0.0), 0.0)
    )
    return Core(
        cfg=dict(cfg),
        q_skill=q_skill,
        q_conf=q_conf,
        q_boost=q_boost,
        q_expl=q_expl,
        surfaced=mem.surfaced,
        n_candidates=mem.n_candidates,
        routed=routed,
        variant=variant,
        decision=rules.VARIANT_DECISION[variant],
        in_context=in_context,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        latency=latency,
        redact=redact,
    )


@dataclass(frozen=True)
class _Memory:
    """Seed-004 recall per case: the reflections surfaced per entity group, the look-ups and
    policy effects they suggest, and the tokens they add to a routed case's context."""

    surfaced: tuple[tuple[Reflection, ...], ...]
    n_candidates: int
    look: dict[str, np.ndarray]
    approve_cancel: np.ndarray
    extend_window: np.ndarray
    tokens: np.ndarray

    @classmethod
    def recall(cls, p: Prepared, cfg: Mapping[str, Any], routed: np.ndarray) -> _Memory:
        surfaced, n_candidates = _recall(
            p.groups, cfg["recency_days"], cfg["min_seen"], cfg["recall_cap"]
        )
        g_tokens = np.array(
            [sum(12 + len(r.proposed_change or "") // 4 for r in s) for s in surfaced],
            dtype=np.int64,
        )
        g_effects = [
            {_EFFECTS[r.fingerprint] for r in s if not r.injected} - {None} for s in surfaced
        ]
        return cls(
            surfaced,
            n_candidates,
            look={
                kind: np.array([eff in g for g in g_effects], dtype=bool)[p.group_idx] & routed
                for eff, kind in _LOOKUPS.items()
            },
            approve_cancel=np.array(["approve_cancellation" in g for g in g_effects])[
                p.group_idx
            ],
            extend_window=np.array(["extend_window" in g for g in g_effects])[p.group_idx],
            tokens=np.where(routed, g_tokens[p.group_idx], 0),
        )


def _retrieve(
    p: Prepared, cfg: Mapping[str, Any], routed: np.ndarray, fixed: np.ndarray, redact: bool
) -> np.ndarray:
    """Retrieval: top_k by rank within max_hops, then kept while the token budget holds."""
    cand = p.present & (p.hop <= cfg["max_hops"]) & routed[:, None]
    masked_rank = np.where(cand, p.rank, ABSENT_RANK)
    order = np.argsort(masked_rank, axis=1, kind="stable")
    taken_sorted = np.take_along_axis(cand, order, axis=1)
    taken_sorted[:, cfg["top_k"] :] = False
    per_doc = np.take_along_axis(p.tokens, order, axis=1)
    if redact:
        per_doc = per_doc + REDACT_PER_PII * np.take_along_axis(p.pii, order, axis=1)
    cum = np.cumsum(np.where(taken_sorted, per_doc, 0), axis=1)
    kept_sorted = taken_sorted & (cum + fixed[:, None] <= cfg["context_token_budget"])
    kept = np.zeros_like(cand)
    np.put_along_axis(kept, order, kept_sorted, axis=1)
    return kept


def _variants(
    p: Prepared,
    cfg: Mapping[str, Any],
    in_context: np.ndarray,
    on_remit: np.ndarray,
    mem: _Memory,
) -> np.ndarray:
    """Decide, per skill, on what is in context (misrouted where the skill is not the case's)."""
    known = rules.Known(
        order=in_context[:, KIND_INDEX["order"]],
        receipt=in_context[:, KIND_INDEX["receipt"]],
        receipt_exists=p.present[:, KIND_INDEX["receipt"]],
        idv=in_context[:, KIND_INDEX["idv"]],
        history=in_context[:, KIND_INDEX["history"]],
        injected_note=p.injected_note & in_context[:, KIND_INDEX["note"]],
    )
    variant = np.full(p.n, Variant.misrouted, dtype=np.int8)
    by_skill = {
        "refunds": lambda: rules.refunds(
            known,
            p.facts,
            threshold=float(cfg["approval_threshold"]),
            require_proof=bool(cfg["require_window_proof"]),
            extend_window=mem.extend_window,
        ),
        "orders": lambda: rules.orders(known),
        "cancellations": lambda: rules.cancellations(
            known, p.facts, approve_anyway=mem.approve_cancel
        ),
        "account": lambda: rules.account(known, p.facts, require_idv=bool(cfg["require_idv"])),
        "faq": lambda: rules.faq(in_context[:, KIND_INDEX["policy"]]),
    }
    for si, name in enumerate(SKILLS):
        mask = on_remit & (p.remit == si)
        if mask.any():
            variant[mask] = by_skill[name]()[mask]
    return variant
