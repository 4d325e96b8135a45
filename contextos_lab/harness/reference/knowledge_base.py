"""The support desk's bundled knowledge: skills, policy documents, request phrasings, true rules.

This is data, versioned by `KB_VERSION`; replay cases pin it (`pinned_context_pack`). The true
policy numbers here are what the Policy evaluator checks against, whatever a config says.
"""

from __future__ import annotations

from datetime import UTC, datetime

KB_VERSION = "support-desk-kb@1"
#: The instant replay cases and reflections are dated against (keeps recall deterministic).
REFERENCE_NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)

#: The true policy: agents may approve refunds up to this amount; above it a human must.
POLICY_APPROVAL_LIMIT = 150.0
REFUND_WINDOW_DAYS = 30

SKILLS: tuple[str, ...] = ("refunds", "orders", "cancellations", "account", "faq")
INTENT_SKILL: dict[str, str] = {
    "refund": "refunds",
    "order_status": "orders",
    "cancellation": "cancellations",
    "account_change": "account",
    "policy_question": "faq",
}
INTENTS: tuple[str, ...] = tuple(INTENT_SKILL)
#: Entities a turn of each intent mentions (what reflection recall matches on).
INTENT_ENTITIES: dict[str, tuple[str, ...]] = {
    "refund": ("refund", "order"),
    "order_status": ("order", "delivery"),
    "cancellation": ("cancellation", "order"),
    "account_change": ("account",),
    "policy_question": ("policy",),
}

#: Lexical router vocabulary; overlaps ("order", "money") are deliberate sources of ambiguity.
SKILL_KEYWORDS: dict[str, frozenset[str]] = {
    "refunds": frozenset({"refund", "money", "back", "reimburse", "charged", "broken", "damaged"}),
    "orders": frozenset({"order", "package", "delivery", "tracking", "arrived", "where", "late"}),
    "cancellations": frozenset({"cancel", "cancellation", "stop", "mistake", "dont"}),
    "account": frozenset({"account", "email", "address", "password", "login", "update", "phone"}),
    "faq": frozenset({"policy", "how", "long", "window", "rules", "allowed", "days"}),
}

#: Customer phrasings per intent. Some are clear, some vague (one keyword), some misleading.
REQUEST_TEMPLATES: dict[str, tuple[str, ...]] = {
    "refund": (
        "I want a refund for order {oid}, it arrived damaged",
        "Please refund my money, the blender is broken",
        "Can I get my money back for order {oid}?",
        "I was charged for something I returned, please reimburse me",
        "The item is not what I expected, I want a refund",
        "This is useless, give me my money back",
        "My order {oid} arrived late and broken, I want my money back",
        "It never worked, what now?",
    ),
    "order_status": (
        "Where is my package for order {oid}?",
        "My order {oid} has not arrived yet, tracking shows nothing",
        "Is my delivery late?",
        "When will order {oid} get here?",
        "Any news on my stuff?",
        "The tracking page for my package is stuck",
    ),
    "cancellation": (
        "Please cancel order {oid}, I ordered it by mistake",
        "I want to cancel my order {oid}",
        "Stop my order {oid}, I dont need it",
        "I changed my mind about order {oid}",
        "Cancel it please",
    ),
    "account_change": (
        "Please update the email address on my account",
        "I need to change the phone number on my account",
        "Update my shipping address please",
        "I cannot login, please change my password",
        "My details are wrong",
    ),
    "policy_question": (
        "How long is the refund window?",
        "What is your policy on returns for damaged items?",
        "How many days do I have to return something?",
        "Are gift cards allowed for refunds?",
        "What are the rules?",
    ),
}

#: Policy documents (id -> text). Token counts are modelled by `doc_tokens`.
POLICY_DOCS: dict[str, str] = {
    "policy:refund_window": (
        "Refunds: items may be refunded within 30 days of delivery with proof of purchase "
        "(receipt or card statement). Outside the window, decline and offer store credit."
    ),
    "policy:approval_limit": (
        "Approval: agents may approve refunds up to $150. Larger refunds need a human approver."
    ),
    "policy:repeat_refunds": (
        "Repeat refunds: a second refund to the same customer within 30 days must be escalated "
        "for fraud review."
    ),
    "policy:idv": (
        "Account changes (email, address, phone, password) require a passed identity "
        "verification (IDV) check on file."
    ),
    "policy:cancellation": (
        "Cancellations: orders may be cancelled until they ship. After shipment, decline and "
        "direct the customer to the returns flow."
    ),
    "policy:shipping": (
        "Shipping: standard delivery takes 3-5 business days; tracking updates every 24 hours."
    ),
    "policy:gift_cards": "Gift cards cannot be refunded to a card; they are reissued as credit.",
    "policy:loyalty": "Loyalty points are earned at 1 point per dollar and expire after a year.",
    "faq:store_hours": "Support hours: 8am to 8pm, Monday to Saturday, local time.",
}
#: Which policy document answers each intent (the key evidence of a policy question).
INTENT_POLICY: dict[str, str] = {
    "refund": "policy:refund_window",
    "order_status": "policy:shipping",
    "cancellation": "policy:cancellation",
    "account_change": "policy:idv",
    "policy_question": "policy:refund_window",
}
DISTRACTOR_DOCS: tuple[str, ...] = ("policy:gift_cards", "policy:loyalty", "faq:store_hours")


def doc_tokens(text: str) -> int:
    """Modelled tokens of a retrieved chunk: 80 of framing and metadata plus the text itself.

    Replay cases store a summary line per document; the chunk a retriever returns is longer.
    """
    return 80 + len(text) // 2
