
"""Seeded near copies of bundled cases: each shape the search / held-out check must refuse.

A shape takes one case (a JSON row of a replay set) and returns a copy that says the same
thing: re-id'd, re-spaced, re-cased, full-width, with a zero-width space or a Cyrillic
look-alike letter inside a text, one extra or one fewer forbidden string, its entities
reordered, its stale content hash changed, punctuation added, numbers re-typed, or several of
these at once. The RNG picks the case, the text field and the position, so a new seed gives
fresh variants. Used by tests/overlap/test_near_copies.py and benchmarks/leak_corpus.py.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
Row = dict[str, Any]
_CYR = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і"}


def bundled_cases(split: str = "search_sets") -> list[Row]:
    rows = [json.loads(line) for line in (ROOT / split / "cases.jsonl").open(encoding="utf-8")]
    for row in rows:
        row["case_id"] = row["packet_id"]
    return rows


def _texts(row: Row) -> list[tuple[Any, Any]]:
    """(container, key) of every non-empty string value at any depth, ids excluded."""
    out: list[tuple[Any, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str) and len(v) > 3 and k not in ("case_id", "packet_id", "id"):
                    if not k.endswith("hash"):
                        out.append((value, k))
                else:
                    walk(v)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, str) and len(v) > 3:
                    out.append((value, i))
                else:
                    walk(v)

    walk(row)
    return out


def _edit_text(rng: random.Random, row: Row, edit: Callable[[random.Random, str], str]) -> Row:
    texts = _texts(row)
    holder, key = rng.choice(texts)
    holder[key] = edit(rng, holder[key])
    return row


def _insert(rng: random.Random, text: str, what: str) -> str:
    i = rng.randint(1, len(text) - 1)
    return text[:i] + what + text[i:]


def _cyrillic(rng: random.Random, text: str) -> str:
    spots = [i for i, c in enumerate(text) if c in _CYR]
    if not spots:
        return text + " "
    i = rng.choice(spots)
    return text[:i] + _CYR[text[i]] + text[i + 1 :]


def _fullwidth(rng: random.Random, text: str) -> str:
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and rng.random() < 0.5 else c for c in text
    )


def _reid(rng: random.Random, row: Row) -> Row:
    row["case_id"] = row["packet_id"] = f"h-copy-{rng.randint(0, 10**6)}"
    return row


def _extra_forbidden(rng: random.Random, row: Row) -> Row:
    row.setdefault("forbidden_strings", []).append(f"user.{rng.randint(1000, 9999)}@example.com")
    return row


def _fewer_forbidden(rng: random.Random, row: Row) -> Row:
    items = row.get("forbidden_strings") or []
    if items:
        items.pop(rng.randrange(len(items)))
    else:
        row["forbidden_strings"] = [f"+1-555-{rng.randint(1000, 9999)}"]
    return row


def _reorder_entities(rng: random.Random, row: Row) -> Row:
    case = row.get("case", row)
    entities = list(case.get("entities") or [])
    entities = [*entities, "order"] if len(entities) < 2 else entities
    case["entities"] = entities[::-1]
    return row


def _retype_numbers(rng: random.Random, row: Row) -> Row:
    case = row.get("case", row)
    for k, v in list(case.items()):
        if isinstance(v, int) and not isinstance(v, bool):
            case[k] = float(v)
    return row


def _stale_hash(rng: random.Random, row: Row) -> Row:
    row["compiled_context_hash"] = f"{rng.getrandbits(256):064x}"
    return row


def _reorder_evidence(rng: random.Random, row: Row) -> Row:
    case = row.get("case", row)
    items = list(case.get("evidence") or [])
    if len(items) < 2:
        return _reorder_entities(rng, row)
    while items == case["evidence"]:
        rng.shuffle(items)
    case["evidence"] = items
    return row


def _sentence_edited(rng: random.Random, row: Row) -> Row:
    """One word of a sentence (a text of 8 words or more) replaced, the rest untouched. In a
    shorter text one word is a real difference at the kit's threshold: the bundled sets hold
    distinct template cases exactly that far apart (they differ in one order id)."""
    long = [t for t in _texts(row) if len(str(t[0][t[1]]).split()) >= 8]
    if not long:
        return _edit_text(rng, row, lambda rr, t: t + "!")
    holder, key = rng.choice(long)
    words = str(holder[key]).split()
    words[rng.randrange(len(words))] = rng.choice(["kindly", "really", "now", "asap", "today"])
    holder[key] = " ".join(words)
    return row


Shape = Callable[[random.Random, Row], Row]
SHAPES: dict[str, Shape] = {
    "re_id": _reid,
    "whitespace": lambda r, row: _edit_text(
        r, row, lambda rr, t: "  " + t.replace(" ", "   ") + " \t"
    ),
    "case": lambda r, row: _edit_text(
        r, row, lambda rr, t: t.upper() if rr.random() < 0.5 else t.swapcase()
    ),
    "full_width": lambda r, row: _edit_text(r, row, _fullwidth),
    "zero_width_space": lambda r, row: _edit_text(
        r, row, lambda rr, t: _insert(rr, t, rr.choice(["\u200b", "\u200d", "\ufeff", "\u2060"]))
    ),
    "cyrillic_lookalike": lambda r, row: _edit_text(r, row, _cyrillic),
    "extra_forbidden_string": _extra_forbidden,
    "one_fewer_forbidden_string": _fewer_forbidden,
    "reordered_entities": _reorder_entities,
    "stale_content_hash": _stale_hash,
    "punctuation_added": lambda r, row: _edit_text(
        r, row, lambda rr, t: t + rr.choice(["!", ".", " ?", "..."])
    ),
    "numbers_retyped": _retype_numbers,
    "reordered_evidence": _reorder_evidence,
    "sentence_edited": _sentence_edited,
}
COMBINED: dict[str, tuple[str, ...]] = {
    "re_id+zero_width+entities": ("re_id", "zero_width_space", "reordered_entities"),
    "re_id+cyrillic+extra_forbidden": ("re_id", "cyrillic_lookalike", "extra_forbidden_string"),
    "full_width+whitespace+case+stale_hash": (
        "full_width",
        "whitespace",
        "case",
        "stale_content_hash",
    ),
}


def near_copy(rng: random.Random, row: Row, shape: str) -> Row:
    out = copy.deepcopy(row)
    for name in COMBINED.get(shape, (shape,)):
        out = SHAPES[name](rng, out)
    return _reid(rng, out)  # always under a new id: the id check alone never finds it


def shape_names() -> list[str]:
    return [*SHAPES, *COMBINED]
