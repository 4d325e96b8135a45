"""The desk's decision rules per skill, vectorised, and its PII redaction.

The rules read only what the run actually has in context: a fact (delivery date, receipt, IDV
verdict, shipment, refund history) is known when the document that states it was retrieved,
kept within the token budget, or looked up because a recalled reflection suggested it. The
config decides how strict the desk is (approval threshold, whether proof / IDV are required);
the Policy evaluator judges the outcome against the true rules in `knowledge_base`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_PHONE = re.compile(r"\+?\d[\d-]{7,}\d")
_CARD = re.compile(r"\b(?:\d{4}[ -]?){3}\d{4}\b")


def redact(text: str) -> str:
    """Mask emails, card numbers and phone numbers (the PII classes the cases carry)."""
    return _PHONE.sub("[phone]", _CARD.sub("[card]", _EMAIL.sub("[email]", text)))


class Decision(IntEnum):
    escalate = 0
    approve = 1
    deny = 2
    answer = 3


DECISION_NAMES = np.array([d.name for d in Decision], dtype=object)


class Variant(IntEnum):
    """Output templates; each maps to a decision and a modelled output length."""

    esc_low_confidence = 0
    esc_over_limit = 1
    esc_missing_evidence = 2
    esc_repeat_refund = 3
    refund_approve_quote = 4
    refund_approve = 5
    refund_deny = 6
    order_answer_quote = 7
    order_answer_generic = 8
    cancel_approve_quote = 9
    cancel_approve = 10
    cancel_deny = 11
    account_approve = 12
    account_deny = 13
    faq_answer_quote = 14
    faq_answer_generic = 15
    misrouted = 16


VARIANT_DECISION = np.array(
    [
        Decision.escalate,
        Decision.escalate,
        Decision.escalate,
        Decision.escalate,
        Decision.approve,
        Decision.approve,
        Decision.deny,
        Decision.answer,
        Decision.answer,
        Decision.approve,
        Decision.approve,
        Decision.deny,
        Decision.approve,
        Decision.deny,
        Decision.answer,
        Decision.answer,
        Decision.answer,
    ],
    dtype=np.int8,
)
#: Modelled output tokens per variant (quoting a record costs its length in output).
VARIANT_OUT_TOKENS = np.array(
    [30, 35, 35, 35, 70, 45, 40, 85, 35, 70, 30, 40, 35, 35, 90, 30, 30], dtype=np.int64
)
#: Variants whose text quotes an evidence record (and so can leak its PII unredacted).
QUOTING = frozenset(
    {Variant.refund_approve_quote, Variant.order_answer_quote, Variant.cancel_approve_quote}
)


@dataclass(frozen=True)
class Known:
    """What the run has in context, per case (bool arrays)."""

    order: np.ndarray
    receipt: np.ndarray
    receipt_exists: np.ndarray
    idv: np.ndarray
    history: np.ndarray
    injected_note: np.ndarray


@dataclass(frozen=True)
class Facts:
    """Ground facts stated by the documents (readable only where `Known` says so)."""

    amount: np.ndarray
    within_window: np.ndarray
    extended_window: np.ndarray
    has_proof: np.ndarray
    repeat: np.ndarray
    shipped: np.ndarray
    idv_passed: np.ndarray


def refunds(
    k: Known,
    f: Facts,
    *,
    threshold: float,
    require_proof: bool,
    extend_window: np.ndarray,
) -> np.ndarray:
    """Refund desk. Strict mode needs order + proof in context; lax mode takes the customer's
    word (notes included, so a note's injected 'approve' is followed)."""
    window_ok = np.where(extend_window, f.extended_window, f.within_window)
    proof_known = k.receipt | (k.order & ~k.receipt_exists)
    known_bad = (k.order & ~window_ok) | (proof_known & ~f.has_proof)
    over = f.amount > threshold
    v = np.full(len(f.amount), Variant.refund_approve, dtype=np.int8)
    v[k.receipt] = Variant.refund_approve_quote
    v[over] = Variant.esc_over_limit
    if require_proof:
        v[~(k.order & proof_known)] = Variant.esc_missing_evidence
    else:
        v[k.injected_note] = np.where(
            k.receipt, Variant.refund_approve_quote, Variant.refund_approve
        )[k.injected_note]
    v[known_bad & ~(k.injected_note & (not require_proof))] = Variant.refund_deny
    v[k.history & f.repeat] = Variant.esc_repeat_refund
    return v


def orders(k: Known) -> np.ndarray:
    return np.where(k.order, Variant.order_answer_quote, Variant.order_answer_generic).astype(
        np.int8
    )


def cancellations(k: Known, f: Facts, *, approve_anyway: np.ndarray) -> np.ndarray:
    """Cancel until shipped; unknown shipment status escalates."""
    v = np.full(len(f.shipped), Variant.esc_missing_evidence, dtype=np.int8)
    v[k.order & ~f.shipped] = Variant.cancel_approve_quote
    v[k.order & f.shipped] = Variant.cancel_deny
    lax = approve_anyway & (v != Variant.cancel_approve_quote)
    v[lax] = np.where(k.order, Variant.cancel_approve_quote, Variant.cancel_approve)[lax]
    return v


def account(k: Known, f: Facts, *, require_idv: bool) -> np.ndarray:
    """Account changes need a passed IDV; lax mode approves unless a failed IDV is in view."""
    v = np.full(len(f.idv_passed), Variant.account_approve, dtype=np.int8)
    if require_idv:
        v[~k.idv] = Variant.esc_missing_evidence
    v[k.idv & ~f.idv_passed] = Variant.account_deny
    return v


def faq(policy_known: np.ndarray) -> np.ndarray:
    return np.where(policy_known, Variant.faq_answer_quote, Variant.faq_answer_generic).astype(
        np.int8
    )
