"""Everything config-independent about a cases frame, as arrays built once per frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from contextos_lab.harness.reference import policy as rules
from contextos_lab.harness.reference.knowledge_base import INTENT_SKILL, POLICY_DOCS, SKILLS
from contextos_lab.harness.reference.policy import Variant
from contextos_lab.harness.reference.router import lexical_scores
from contextos_lab.memory.routing_feedback import normalize_query

KINDS: tuple[str, ...] = ("order", "receipt", "idv", "note", "history", "policy", "distractor")
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
ABSENT_RANK = 99


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


#: `_evidence`: five (case, kind) arrays, then per case its kinds in rank order, doc ids, texts.
_EvidenceArrays = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    list[tuple[int, ...]], list[tuple[str, ...]], list[dict[str, str]],
]  # fmt: skip


def _evidence(column: pd.Series) -> _EvidenceArrays:
    """Each case's evidence by kind (a column per kind): present, hop, rank, tokens and PII,
    then per case the kinds in rank order, the document ids and the texts by kind."""
    n, m = len(column), len(KINDS)
    present, pii = np.zeros((n, m), dtype=bool), np.zeros((n, m), dtype=bool)
    hop, tokens = np.zeros((n, m), dtype=np.int8), np.zeros((n, m), dtype=np.int64)
    rank = np.full((n, m), ABSENT_RANK, dtype=np.int16)
    rank_order: list[tuple[int, ...]] = []
    doc_ids: list[tuple[str, ...]] = []
    texts: list[dict[str, str]] = []
    for i, evidence in enumerate(column):
        ids = [""] * m
        by_kind: dict[str, str] = {}
        order = []
        for item in sorted(evidence, key=lambda it: it["rank"]):
            k = KIND_INDEX[item["kind"]]
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
    return present, hop, rank, tokens, pii, rank_order, doc_ids, texts


def _facts(cases: pd.DataFrame) -> rules.Facts:
    facts_frame = pd.DataFrame(list(cases["facts"]))
    days = cases["days_since_delivery"].to_numpy(dtype=np.int64)
    return rules.Facts(
        amount=cases["amount"].to_numpy(dtype=np.float64),
        within_window=facts_frame["within_window"].to_numpy(dtype=bool),
        extended_window=days <= 60,
        has_proof=facts_frame["has_proof"].to_numpy(dtype=bool),
        repeat=facts_frame["repeat_customer"].to_numpy(dtype=bool),
        shipped=facts_frame["shipped"].to_numpy(dtype=bool),
        idv_passed=facts_frame["idv_passed"].to_numpy(dtype=bool),
    )


def prepare_cases(cases: pd.DataFrame) -> Prepared:
    """The config-independent arrays of a cases frame (see `Prepared`)."""
    n = len(cases)
    present, hop, rank, tokens, pii, rank_order, doc_ids, texts = _evidence(cases["evidence"])
    queries_all = [normalize_query(r) for r in cases["request"]]
    queries = tuple(dict.fromkeys(queries_all))
    qpos = {q: i for i, q in enumerate(queries)}
    groups_all = [tuple(e) for e in cases["entities"]]
    groups = tuple(dict.fromkeys(groups_all))
    gpos = {g: i for i, g in enumerate(groups)}
    facts = _facts(cases)
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
        injected_note=injected & present[:, KIND_INDEX["note"]],
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
