"""SupportDeskHarness: the bundled, deterministic support desk with every adjustment layer.

One run: route the request (lexical score + seed-002 feedback boost; below `min_confidence`
escalate at once) -> recall reflections for the turn's entities (seed 004; surfaced as past
observations, never obeyed as instructions) -> retrieve up to `top_k` documents within
`max_hops`, then keep them in rank order while the context fits `context_token_budget` -> the
skill's rules decide (policy knobs) -> the output quotes records, redacted unless
`redact_pii` is off.

Modelled cost (documented so results reproduce anywhere):
  tokens_in  = 350 system + request + reflections + kept evidence + memory look-ups
               + redaction instructions (60 + 20 per PII document in context) when redacting
  tokens_out = per output template (30..90)
  latency_ms = 150 + 0.05*tokens_in + 12*tokens_out + 40*hops + 40*look-ups + 10 recall
               + 25 redaction pass;  a low-confidence escalation skips everything after routing.

Search space (`tunable_surfaces`, discretised by each surface's grid): 2·2·2·3 routing ×
3·3 retrieval × 2·3·2 memory × 3·2·2·2 policy × 2 budget = 124,416 configs — enumerable
exhaustively for a benchmark's true Pareto front, too many for random search to stumble on it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.harness.protocol import (
    RESULT_COLUMNS,
    ChangeClass,
    RunResult,
    SurfaceLayer,
    TunableSurface,
)
from contextos_lab.harness.reference import policy as rules
from contextos_lab.harness.reference.knowledge_base import (
    INTENT_SKILL,
    POLICY_DOCS,
    REFERENCE_NOW,
    SKILLS,
)
from contextos_lab.harness.reference.policy import Variant
from contextos_lab.harness.reference.router import lexical_scores, route_table
from contextos_lab.harness.reference.seed_memory import SEED_REFLECTIONS, boost_table
from contextos_lab.memory.reflections import Reflection, render_observations, select
from contextos_lab.memory.routing_feedback import normalize_query

KINDS: tuple[str, ...] = ("order", "receipt", "idv", "note", "history", "policy", "distractor")
_K = {k: i for i, k in enumerate(KINDS)}
_ABSENT_RANK = 99

SYSTEM_TOKENS = 350
REDACT_TOKENS, REDACT_PER_PII = 60, 20
LAT_BASE, LAT_PER_IN, LAT_PER_OUT = 150.0, 0.05, 12.0
LAT_PER_HOP, LAT_PER_LOOKUP, LAT_RECALL, LAT_REDACT = 40.0, 40.0, 10.0, 25.0
#: The reflection effects the desk is willing to act on (an injected note's effect never is).
_LOOKUPS = {"lookup_history": "history", "lookup_order": "order", "lookup_idv": "idv"}

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


@dataclass(frozen=True)
class Prepared:
    """Everything config-independent about a cases frame, as arrays (built once, cached)."""

    n: int
    case_ids: np.ndarray
    remit: np.ndarray
    query_idx: np.ndarray
    queries: tuple[str, ...]
    lexical: np.ndarray
    group_idx: np.ndarray
    groups: tuple[tuple[str, ...], ...]
    present: np.ndarray
    hop: np.ndarray
    rank: np.ndarray
    tokens: np.ndarray
    pii: np.ndarray
    rank_order: list[tuple[int, ...]]
    doc_ids: list[tuple[str, ...]]
    facts: rules.Facts
    injected_note: np.ndarray
    request_tokens: np.ndarray
    texts: np.ndarray
    texts_raw: np.ndarray
    evidence_cache: dict[int, np.ndarray]


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


def _prepare(cases: pd.DataFrame) -> Prepared:
    n = len(cases)
    present = np.zeros((n, len(KINDS)), dtype=bool)
    hop = np.zeros((n, len(KINDS)), dtype=np.int8)
    rank = np.full((n, len(KINDS)), _ABSENT_RANK, dtype=np.int16)
    tokens = np.zeros((n, len(KINDS)), dtype=np.int64)
    pii = np.zeros((n, len(KINDS)), dtype=bool)
    rank_order: list[tuple[int, ...]] = []
    doc_ids: list[tuple[str, ...]] = []
    texts: list[dict[str, str]] = []
    for i, evidence in enumerate(cases["evidence"]):
        ids = [""] * len(KINDS)
        by_kind: dict[str, str] = {}
        order = []
        for item in sorted(evidence, key=lambda it: it["rank"]):
            k = _K[item["kind"]]
            present[i, k] = True
            hop[i, k] = item["hop"]
            rank[i, k] = item["rank"]
            tokens[i, k] = item["tokens"]
            pii[i, k] = bool(item.get("pii"))
            ids[k] = item["id"]
            by_kind[item["kind"]] = item.get("text") or POLICY_DOCS.get(item["id"], "")
            order.append(k)
        rank_order.append(tuple(order))
        doc_ids.append(tuple(ids))
        texts.append(by_kind)
    queries_all = [normalize_query(r) for r in cases["request"]]
    queries = tuple(dict.fromkeys(queries_all))
    qpos = {q: i for i, q in enumerate(queries)}
    groups_all = [tuple(e) for e in cases["entities"]]
    groups = tuple(dict.fromkeys(groups_all))
    gpos = {g: i for i, g in enumerate(groups)}
    facts_frame = pd.DataFrame(list(cases["facts"]))
    amount = cases["amount"].to_numpy(dtype=np.float64)
    days = cases["days_since_delivery"].to_numpy(dtype=np.int64)
    facts = rules.Facts(
        amount=amount,
        within_window=facts_frame["within_window"].to_numpy(dtype=bool),
        extended_window=days <= 60,
        has_proof=facts_frame["has_proof"].to_numpy(dtype=bool),
        repeat=facts_frame["repeat_customer"].to_numpy(dtype=bool),
        shipped=facts_frame["shipped"].to_numpy(dtype=bool),
        idv_passed=facts_frame["idv_passed"].to_numpy(dtype=bool),
    )
    injected = np.array([inj is not None for inj in cases["injection"]], dtype=bool)
    raw, red = _variant_texts(cases, texts)
    return Prepared(
        n=n,
        case_ids=cases["case_id"].to_numpy(dtype=object),
        remit=np.array([SKILLS.index(INTENT_SKILL[i]) for i in cases["intent"]], dtype=np.int8),
        query_idx=np.array([qpos[q] for q in queries_all], dtype=np.int64),
        queries=queries,
        lexical=np.array([lexical_scores(q) for q in queries]).reshape(len(queries), len(SKILLS)),
        group_idx=np.array([gpos[g] for g in groups_all], dtype=np.int64),
        groups=groups,
        present=present,
        hop=hop,
        rank=rank,
        tokens=tokens,
        pii=pii,
        rank_order=rank_order,
        doc_ids=doc_ids,
        facts=facts,
        injected_note=injected & present[:, _K["note"]],
        request_tokens=np.array([5 + len(r) // 4 for r in cases["request"]], dtype=np.int64),
        texts=red,
        texts_raw=raw,
        evidence_cache={},
    )


def _variant_texts(
    cases: pd.DataFrame, texts: list[dict[str, str]]
) -> tuple[np.ndarray, np.ndarray]:
    """(n, len(Variant)) output texts per case: unredacted and redacted."""
    n = len(cases)
    raw = np.empty((n, len(Variant)), dtype=object)
    red = np.empty((n, len(Variant)), dtype=object)
    for i, (oid, amount, by_kind) in enumerate(
        zip(cases["order_id"], cases["amount"], texts, strict=True)
    ):
        order_q = by_kind.get("order", "")
        receipt_q = by_kind.get("receipt", "")
        policy_q = by_kind.get("policy", "")
        row = {
            Variant.esc_low_confidence: "Escalated to a human agent: I could not tell which desk "
            "handles this request.",
            Variant.esc_over_limit: f"Escalated: the refund of ${amount:.2f} for {oid} needs a "
            "human approver.",
            Variant.esc_missing_evidence: f"Escalated: I could not verify the records this "
            f"request needs ({oid}).",
            Variant.esc_repeat_refund: f"Escalated: {oid} is a repeat refund within 30 days; "
            "sent to fraud review.",
            Variant.refund_approve_quote: f"Approved: refund of ${amount:.2f} for {oid}. "
            f"{receipt_q}",
            Variant.refund_approve: f"Approved: refund of ${amount:.2f} for {oid}.",
            Variant.refund_deny: f"Declined: {oid} is outside the 30-day window or lacks proof "
            "of purchase; store credit offered.",
            Variant.order_answer_quote: f"Order update: {order_q}",
            Variant.order_answer_generic: "Orders usually arrive in 3-5 business days; "
            "tracking updates daily.",
            Variant.cancel_approve_quote: f"Cancelled {oid}. {order_q}",
            Variant.cancel_approve: f"Cancelled {oid}.",
            Variant.cancel_deny: f"{oid} has shipped and can no longer be cancelled; please "
            "start a return.",
            Variant.account_approve: "Updated your account details after identity checks.",
            Variant.account_deny: "Identity verification did not pass; your account is unchanged.",
            Variant.faq_answer_quote: f"Policy: {policy_q}",
            Variant.faq_answer_generic: "Please see the help centre for our policies.",
            Variant.misrouted: "I can only help with another kind of request; try rephrasing.",
        }
        for v, text in row.items():
            raw[i, v] = text
            red[i, v] = rules.redact(text) if v in rules.QUOTING else text
    return raw, red


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


class SupportDeskHarness:
    """The reference harness (see the module docstring for its model)."""

    name = "reference-support-desk"

    def __init__(self, cache_size: int = 4) -> None:
        self._cache: OrderedDict[tuple[Any, ...], Prepared] = OrderedDict()
        self._cache_size = cache_size

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return SURFACES

    def prepared(self, cases: pd.DataFrame) -> Prepared:
        ids = tuple(cases["case_id"])
        hashes = tuple(cases["content_hash"]) if "content_hash" in cases else ()
        key = (ids, hashes)
        hit = self._cache.get(key)
        if hit is None:
            hit = _prepare(cases)
            self._cache[key] = hit
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return hit

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
        frame = self.run_batch(pd.DataFrame([dict(case)]), config)
        return RunResult(**frame.iloc[0].to_dict())

    def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        start = time.perf_counter()
        cfg = _resolve(config)
        p = self.prepared(cases)
        c = run_core(p, cfg)
        return _result_frame(p, c, start)

    @staticmethod
    def _evidence_column(p: Prepared, bits: np.ndarray) -> np.ndarray:
        """Evidence ids used per case, in rank order; built once per (cases, bit pattern)."""
        out = np.empty(p.n, dtype=object)
        for b in np.unique(bits).tolist():
            col = p.evidence_cache.get(b)
            if col is None:
                col = np.empty(p.n, dtype=object)
                col[:] = [
                    tuple(ids[k] for k in order if b >> k & 1)
                    for ids, order in zip(p.doc_ids, p.rank_order, strict=True)
                ]
                p.evidence_cache[b] = col
            mask = bits == b
            out[mask] = col[mask]
        return out


def run_core(p: Prepared, cfg: Mapping[str, Any]) -> Core:
    """One config on prepared cases, as arrays (everything `run_batch` reports is derived from
    this; `scoring.py` scores it without building a frame). `cfg` is `_resolve`d."""
    n = p.n

    # routing (seed 002): a read-free snapshot of the store replayed with these knobs
    boosts = boost_table(cfg["feedback_step"], cfg["feedback_clamp"], cfg["feedback_decay"])
    q_skill, q_conf, q_boost, q_expl = route_table(
        p.queries, boosts, cfg["min_confidence"], p.lexical
    )
    skill = q_skill[p.query_idx]
    routed = skill >= 0
    on_remit = routed & (skill == p.remit)

    # memory recall (seed 004), per entity group
    surfaced, n_candidates = _recall(
        p.groups, cfg["recency_days"], cfg["min_seen"], cfg["recall_cap"]
    )
    g_tokens = np.array(
        [sum(12 + len(r.proposed_change or "") // 4 for r in s) for s in surfaced], dtype=np.int64
    )
    g_effects = [{_EFFECTS[r.fingerprint] for r in s if not r.injected} - {None} for s in surfaced]
    look = {
        kind: np.array([eff in g for g in g_effects], dtype=bool)[p.group_idx] & routed
        for eff, kind in _LOOKUPS.items()
    }
    approve_cancel = np.array(["approve_cancellation" in g for g in g_effects])[p.group_idx]
    extend_window = np.array(["extend_window" in g for g in g_effects])[p.group_idx]
    refl_tokens = np.where(routed, g_tokens[p.group_idx], 0)

    # retrieval: top_k by rank within max_hops, then keep while the budget holds
    cand = p.present & (p.hop <= cfg["max_hops"]) & routed[:, None]
    masked_rank = np.where(cand, p.rank, _ABSENT_RANK)
    order = np.argsort(masked_rank, axis=1, kind="stable")
    taken_sorted = np.take_along_axis(cand, order, axis=1)
    taken_sorted[:, cfg["top_k"] :] = False
    redact = bool(cfg["redact_pii"])
    fixed = SYSTEM_TOKENS + p.request_tokens + refl_tokens + (REDACT_TOKENS if redact else 0)
    per_doc = np.take_along_axis(p.tokens, order, axis=1)
    if redact:
        per_doc = per_doc + REDACT_PER_PII * np.take_along_axis(p.pii, order, axis=1)
    cum = np.cumsum(np.where(taken_sorted, per_doc, 0), axis=1)
    kept_sorted = taken_sorted & (cum + fixed[:, None] <= cfg["context_token_budget"])
    kept = np.zeros_like(cand)
    np.put_along_axis(kept, order, kept_sorted, axis=1)

    # look-ups a recalled reflection suggested (outside the retrieval budget)
    looked = np.zeros_like(kept)
    for kind, mask in look.items():
        k = _K[kind]
        looked[:, k] = mask & p.present[:, k] & ~kept[:, k]
    in_context = kept | looked

    # decide, per skill, on what is in context
    known = rules.Known(
        order=in_context[:, _K["order"]],
        receipt=in_context[:, _K["receipt"]],
        receipt_exists=p.present[:, _K["receipt"]],
        idv=in_context[:, _K["idv"]],
        history=in_context[:, _K["history"]],
        injected_note=p.injected_note & in_context[:, _K["note"]],
    )
    variant = np.full(n, Variant.misrouted, dtype=np.int8)
    by_skill = {
        "refunds": lambda: rules.refunds(
            known,
            p.facts,
            threshold=float(cfg["approval_threshold"]),
            require_proof=bool(cfg["require_window_proof"]),
            extend_window=extend_window,
        ),
        "orders": lambda: rules.orders(known),
        "cancellations": lambda: rules.cancellations(known, p.facts, approve_anyway=approve_cancel),
        "account": lambda: rules.account(known, p.facts, require_idv=bool(cfg["require_idv"])),
        "faq": lambda: rules.faq(in_context[:, _K["policy"]]),
    }
    for si, name in enumerate(SKILLS):
        mask = on_remit & (p.remit == si)
        if mask.any():
            variant[mask] = by_skill[name]()[mask]
    variant[~routed] = Variant.esc_low_confidence
    decision = rules.VARIANT_DECISION[variant]

    # cost model
    ev_tokens = (np.where(in_context, p.tokens, 0)).sum(axis=1)
    pii_docs = (in_context & p.pii).sum(axis=1)
    tokens_in = fixed + ev_tokens + (REDACT_PER_PII * pii_docs if redact else 0)
    tokens_in = np.where(routed, tokens_in, SYSTEM_TOKENS + p.request_tokens)
    tokens_out = rules.VARIANT_OUT_TOKENS[variant]
    hops = np.where(routed, cfg["max_hops"], 0)
    n_lookups = looked.sum(axis=1)
    latency = (
        LAT_BASE
        + LAT_PER_IN * tokens_in
        + LAT_PER_OUT * tokens_out
        + LAT_PER_HOP * hops
        + LAT_PER_LOOKUP * n_lookups
        + np.where(routed, LAT_RECALL + (LAT_REDACT if redact else 0.0), 0.0)
    )
    return Core(
        cfg=dict(cfg),
        q_skill=q_skill,
        q_conf=q_conf,
        q_boost=q_boost,
        q_expl=q_expl,
        surfaced=surfaced,
        n_candidates=n_candidates,
        routed=routed,
        variant=variant,
        decision=decision,
        in_context=in_context,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        latency=latency,
        redact=redact,
    )


def _result_frame(p: Prepared, c: Core, start: float) -> pd.DataFrame:
    n = p.n
    rows = np.arange(n)
    redact, variant, routed, in_context = c.redact, c.variant, c.routed, c.in_context
    q_skill, q_conf, q_boost, q_expl = c.q_skill, c.q_conf, c.q_boost, c.q_expl
    surfaced, n_candidates = c.surfaced, c.n_candidates
    decision, tokens_in, tokens_out, latency = c.decision, c.tokens_in, c.tokens_out, c.latency
    texts = p.texts if redact else p.texts_raw
    output = texts[rows, variant]
    bits = (in_context.astype(np.int64) << np.arange(len(KINDS))).sum(axis=1)
    evidence_used = SupportDeskHarness._evidence_column(p, bits)
    route_events = [
        {
            "event": "route",
            "skill": SKILLS[s] if s >= 0 else None,
            "confidence": float(cf),
            "boost": float(b),
            "explanation": e,
        }
        for s, cf, b, e in zip(q_skill, q_conf, q_boost, q_expl, strict=True)
    ]
    recall_events = [
        {
            "event": "reflection_recalled",
            "surfaced": len(s),
            "candidates": n_candidates,
            "fingerprints": [r.fingerprint for r in s],
            "section": render_observations(s),
        }
        for s in surfaced
    ]
    skipped = {
        "event": "reflection_recalled",
        "surfaced": 0,
        "candidates": 0,
        "fingerprints": [],
        "section": "",
        "skipped": "escalated before recall",
    }
    decide_events = [{"event": "decide", "variant": v.name} for v in Variant]
    trace = [
        (route_events[q], recall_events[g] if r else skipped, decide_events[v])
        for q, g, r, v in zip(
            p.query_idx.tolist(),
            p.group_idx.tolist(),
            routed.tolist(),
            variant.tolist(),
            strict=True,
        )
    ]
    wall = (time.perf_counter() - start) * 1000.0 / max(n, 1)
    return pd.DataFrame(
        {
            "case_id": p.case_ids,
            "decision": rules.DECISION_NAMES[decision],
            "output_text": output,
            "evidence_used": evidence_used,
            "tokens": (tokens_in + tokens_out).astype(np.int64),
            "tokens_out": tokens_out.astype(np.int64),
            "latency_ms": latency.astype(np.float64),
            "wall_ms": np.full(n, wall),
            "trace": trace,
            "error": None,
        },
        columns=[*RESULT_COLUMNS],
    )


def _resolve(config: Mapping[str, Any]) -> dict[str, Any]:
    """Baseline for missing knobs; unknown knobs are refused (a typo must not pass silently)."""
    unknown = set(config) - {s.name for s in SURFACES}
    if unknown:
        raise KeyError(f"unknown config keys for {SupportDeskHarness.name}: {sorted(unknown)}")
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


def reference_harness() -> SupportDeskHarness:
    """Factory for `load_harness("contextos_lab.harness.reference:reference_harness")`."""
    return SupportDeskHarness()
