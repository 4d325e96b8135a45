"""The `run_batch` result frame (outputs, evidence, costs, trace) from one config's arrays."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from contextos_lab.harness.protocol import RESULT_COLUMNS
from contextos_lab.harness.reference import policy as rules
from contextos_lab.harness.reference.core import Core
from contextos_lab.harness.reference.knowledge_base import SKILLS
from contextos_lab.harness.reference.policy import Variant
from contextos_lab.harness.reference.prepared import KINDS, Prepared
from contextos_lab.memory.reflections import render_observations


def evidence_column(p: Prepared, bits: np.ndarray) -> np.ndarray:
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


def _trace(p: Prepared, c: Core) -> list[tuple[dict[str, Any], ...]]:
    """Per case: its route, its recall (skipped when escalated before it) and its decision;
    events are built once per query, entity group and variant and shared between cases."""
    route_events = [
        {
            "event": "route",
            "skill": SKILLS[s] if s >= 0 else None,
            "confidence": float(cf),
            "boost": float(b),
            "explanation": e,
        }
        for s, cf, b, e in zip(c.q_skill, c.q_conf, c.q_boost, c.q_expl, strict=True)
    ]
    recall_events = [
        {
            "event": "reflection_recalled",
            "surfaced": len(s),
            "candidates": c.n_candidates,
            "fingerprints": [r.fingerprint for r in s],
            "section": render_observations(s),
        }
        for s in c.surfaced
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
    return [
        (route_events[q], recall_events[g] if r else skipped, decide_events[v])
        for q, g, r, v in zip(
            p.query_idx.tolist(),
            p.group_idx.tolist(),
            c.routed.tolist(),
            c.variant.tolist(),
            strict=True,
        )
    ]


def result_frame(p: Prepared, c: Core, start: float) -> pd.DataFrame:
    """The frame `run_batch` returns (RESULT_COLUMNS); `start` dates the wall time."""
    n = p.n
    texts = p.texts if c.redact else p.texts_raw
    output = texts[np.arange(n), c.variant]
    bits = (c.in_context.astype(np.int64) << np.arange(len(KINDS))).sum(axis=1)
    evidence_used = evidence_column(p, bits)
    trace = _trace(p, c)
    decision, tokens_in, tokens_out, latency = c.decision, c.tokens_in, c.tokens_out, c.latency
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
