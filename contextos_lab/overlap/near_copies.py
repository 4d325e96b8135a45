"""Copies of a case in another set: exact once normalised (lists in any order), equal apart
from set-like fields, of the same shape with every text alike, or near (Jaccard >= 0.9 over
normalised word shingles) with the same scored values.

Near is near in what is scored: records that differ in a number, a flag or a short text (an
enum, an id, a question) the harness or an assertion reads are two cases however alike their
words are (`normalise.scored`); the Jaccard rule is for free text. A changed number in a record
is not a changed word in a sentence, and `cases import` splits by this same rule, so an import
never makes a split the spec check refuses.

`datasketch`'s MinHash LSH proposes near pairs in near-linear time (thousands of held-out cases
against thousands of search cases); each candidate is confirmed on the exact Jaccard of the
two shingle sets, so a verdict never rests on the sketch's estimate. A short case gains or
loses more than 10 % of its shingles from one extra list item, so "equal apart from set-like
fields" (same texts and numbers; the entities or forbidden strings listed differ) is its own
rule rather than left to the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from datasketch import MinHash, MinHashLSH

from contextos_lab.overlap.normalise import (
    bagged,
    normalised,
    scored,
    shape_of,
    shingles,
    texts,
    without_sets,
    words,
)
from contextos_lab.schemas.base import canonical_json, sha256_hex

THRESHOLD = 0.9
NUM_PERM = 128
#: The LSH is tuned below the threshold so a true pair near 0.9 is rarely missed as a candidate.
_LSH_THRESHOLD = 0.7
#: A case needs this many words outside its lists before "equal apart from lists" can apply.
_MIN_WORDS = 5
#: Same shape (structure, numbers and flags all equal) and every differing text a sentence
#: at least this alike (difflib ratio) is a near copy. On the bundled sets distinct
#: same-shape pairs (template cases that differ in an order id) reach 0.67; one word edited
#: in a bundled case's sentence keeps 0.74 or more.
TEXTS_ALIKE = 0.75
#: Only sentences (this many words or more) may differ under that rule; shorter texts must
#: match exactly ("Where is my parcel?" and "... now?" are two cases).
_MIN_SENTENCE = 8
#: Cases of one shape (same structure, numbers and flags) are compared text by text only in
#: groups up to this size: a set of text-only cases is one big group, left to the shingles.
_MAX_GROUP = 50


@dataclass(frozen=True)
class Compared:
    """One case in comparable form."""

    case_id: str
    key: str  # hash of the normalised case
    loose_key: str | None  # hash of it without set-like fields (None: too little left)
    bag_key: str  # hash of it with every list sorted (order ignored)
    shape_key: str  # hash of its shape (texts replaced by a placeholder)
    texts: tuple[str, ...]  # its texts, in the bagged order
    scored_key: str  # hash of its scored values (numbers, flags, short texts): equal or distinct
    grams: frozenset[str]


@dataclass(frozen=True)
class Copy:
    a_id: str
    b_id: str
    how: str  # "normalised", "apart from lists" or "near (Jaccard 0.93)"

    @property
    def named(self) -> str:
        return f"{self.a_id}={self.b_id}" if self.a_id != self.b_id else self.a_id


def _hash(value: Any) -> str:
    return sha256_hex(canonical_json(value))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def compared(case_id: str, row: Mapping[str, Any]) -> Compared:
    """`row` in comparable form. A null field is a missing one: a case set read as a frame
    fills the fields other cases have with nulls."""
    form = normalised({k: v for k, v in row.items() if not _missing(v)})
    rest = without_sets(form)
    bag = bagged(form)
    loose = _hash(rest) if len(words(rest)) >= _MIN_WORDS else None
    return Compared(
        case_id=case_id,
        key=_hash(form),
        loose_key=loose,
        bag_key=_hash(bag),
        shape_key=_hash(shape_of(bag)),
        texts=tuple(texts(bag)),
        scored_key=_hash(scored(bag, _MIN_SENTENCE)),
        grams=frozenset(shingles(bag)),
    )


def _texts_alike(a: Compared, b: Compared, threshold: float) -> float:
    """The least similarity (difflib ratio) of two same-shape cases' texts, field by field."""
    if len(a.texts) != len(b.texts) or not a.texts:
        return 0.0
    least = 1.0
    for x, y in zip(a.texts, b.texts, strict=True):
        if x == y:
            continue
        if min(len(x.split()), len(y.split())) < _MIN_SENTENCE:
            return 0.0  # a short text (an id, a question) that differs is a different case
        matcher = SequenceMatcher(None, x, y, autojunk=False)
        if matcher.quick_ratio() < threshold:
            return 0.0
        least = min(least, matcher.ratio())
        if least < threshold:
            return least
    return least


def _sketches(grams: Sequence[frozenset[str]]) -> list[MinHash]:
    """MinHashes of many shingle sets at once (datasketch's vectorised bulk path)."""
    if not grams:
        return []
    return MinHash.bulk([[g.encode("utf-8") for g in sorted(x)] for x in grams], num_perm=NUM_PERM)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if (a or b) else 1.0


def _same_shape_alike(
    group: list[Compared], c: Compared, threshold: float = TEXTS_ALIKE
) -> Copy | None:
    """A case of the same shape whose every text is at least `threshold` alike (a word of a
    short case edited: too few shingles for the Jaccard rule to see)."""
    if not group or len(group) > _MAX_GROUP:
        return None
    best = max(((_texts_alike(other, c, threshold), other) for other in group), key=lambda x: x[0])
    if best[0] >= threshold:
        return Copy(best[1].case_id, c.case_id, f"texts alike ({best[0]:.2f})")
    return None


def copies(
    a: Sequence[Compared], b: Sequence[Compared], threshold: float = THRESHOLD
) -> list[Copy]:
    """Each case of `b` that copies a case of `a`, with the first rule that finds it."""
    by_key = {c.key: c.case_id for c in reversed(a)}
    by_loose = {c.loose_key: c.case_id for c in reversed(a) if c.loose_key}
    by_bag = {c.bag_key: c.case_id for c in reversed(a)}
    by_shape: dict[str, list[Compared]] = {}
    for c in a:
        by_shape.setdefault(c.shape_key, []).append(c)
    lsh = MinHashLSH(threshold=_LSH_THRESHOLD, num_perm=NUM_PERM)
    indexed = [i for i, c in enumerate(a) if c.grams]
    with lsh.insertion_session() as session:
        for i, sketch in zip(indexed, _sketches([a[i].grams for i in indexed]), strict=True):
            session.insert(i, sketch)
    found, pending = [], []
    for c in b:
        if c.key in by_key:
            found.append(Copy(by_key[c.key], c.case_id, "normalised"))
        elif c.loose_key in by_loose:
            found.append(Copy(by_loose[c.loose_key], c.case_id, "apart from lists"))
        elif c.bag_key in by_bag:
            found.append(Copy(by_bag[c.bag_key], c.case_id, "normalised, order ignored"))
        elif (alike := _same_shape_alike(by_shape.get(c.shape_key, []), c)) is not None:
            found.append(alike)
        elif c.grams:
            pending.append(c)
    for c, sketch in zip(pending, _sketches([c.grams for c in pending]), strict=True):
        near = [i for i in lsh.query(sketch) if a[i].scored_key == c.scored_key]
        scores = [(jaccard(a[i].grams, c.grams), i) for i in near]
        score, i = max(scores, default=(0.0, -1))
        if score >= threshold:
            found.append(Copy(a[i].case_id, c.case_id, f"near (Jaccard {score:.2f})"))
    return found
