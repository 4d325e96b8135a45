"""A generated set of structured cases (records of enums, numbers and flags, with assertions):
every pair differs in a field the harness or an assertion reads, many in that one field only.

The shape of an access desk's cases (system, access level, approvals, training age, ticket),
which word-shingle similarity took for near copies. Used by tests/overlap and
benchmarks/near_copies.py; a new seed gives a fresh set.
"""

from __future__ import annotations

import random
from typing import Any

Case = dict[str, Any]
SYSTEMS = ("payroll", "crm", "vpn", "warehouse", "billing", "hr-portal", "git", "analytics")
LEVELS = ("read", "write", "admin")
STATUS = ("full_time", "contractor", "intern", "on_leave")
#: The free text every case shares: a form's boilerplate, so the records differ only in fields.
REQUEST = (
    "Access request raised through the service desk portal by the requester on behalf of the "
    "team, reviewed against the access policy for the named system and level before any grant"
)


def decision(record: Case) -> str:
    """The desk's policy: what the assertion expects (so the fields are what it decides on)."""
    if record["employment_status"] == "on_leave" or not record["has_ticket"]:
        return "deny"
    if record["training_age_days"] > 365:
        return "retrain"
    if record["access_level"] == "admin" and not record["manager_approved"]:
        return "escalate"
    return "grant"


def _record(rng: random.Random) -> Case:
    return {
        "system": rng.choice(SYSTEMS),
        "access_level": rng.choice(LEVELS),
        "manager_approved": rng.random() < 0.5,
        "training_age_days": rng.randint(0, 730),
        "employment_status": rng.choice(STATUS),
        "has_ticket": rng.random() < 0.8,
    }


def _variant(rng: random.Random, base: Case) -> Case:
    """`base` with one field changed: a pair that differs in that field only."""
    out = dict(base)
    field = rng.choice(sorted(base))
    if field == "training_age_days":
        out[field] = rng.randint(0, 730)
    elif isinstance(base[field], bool):
        out[field] = not base[field]
    else:
        options = {"system": SYSTEMS, "access_level": LEVELS, "employment_status": STATUS}[field]
        out[field] = rng.choice([o for o in options if o != base[field]])
    return out


def structured_cases(n: int, seed: int = 0, variants: int = 3) -> list[Case]:
    """`n` distinct cases in the simple case format (`id`, `vars`, `assert`): bases and, for
    each, up to `variants` records changed in one field."""
    rng = random.Random(seed)
    records: list[Case] = []
    seen: set[tuple[Any, ...]] = set()
    while len(records) < n:
        base = _record(rng)
        for record in [base, *(_variant(rng, base) for _ in range(variants))]:
            key = tuple(sorted(record.items()))
            if key not in seen and len(records) < n:
                seen.add(key)
                records.append(record)
    return [
        {
            "id": f"acc{i:04d}",
            "vars": {**r, "request": REQUEST},
            "assert": [{"type": "equals", "target": "decision", "value": decision(r)}],
        }
        for i, r in enumerate(records)
    ]
