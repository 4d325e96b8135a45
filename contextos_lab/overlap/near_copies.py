"""Copies of a case in another set: exact once normalised, equal apart from set-like fields, or
near (Jaccard >= 0.9 over normalised word shingles).

`datasketch`'s MinHash LSH proposes near pairs in near-linear time (thousands of held-out cases
against thousands of search cases); each candidate is confirmed on the exact Jaccard of the
two shingle sets, so a verdict never rests on the sketch's estimate. A short case gains or
loses more than 10 % of its shingles from one extra list item, so "equal apart from set-like
fields" (same texts and numbers; the entities or forbidden strings listed differ) is its own
rule rather than left to the threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from datasketch import MinHash, MinHashLSH

from contextos_lab.overlap.normalise import normalised, shingles, without_sets, words
from contextos_lab.schemas.base import canonical_json, sha256_hex

THRESHOLD = 0.9
NUM_PERM = 128
#: The LSH is tuned below the threshold so a true pair near 0.9 is rarely missed as a candidate.
_LSH_THRESHOLD = 0.7
#: A case needs this many words outside its lists before "equal apart from lists" can apply.
_MIN_WORDS = 5


@dataclass(frozen=True)
class Compared:
    """One case in comparable form."""

    case_id: str
    key: str  # hash of the normalised case
    loose_key: str | None  # hash of it without set-like fields (None: too little left)
    grams: frozenset[str]


@dataclass(frozen=True)
class Copy:
    a_id: str
    b_id: str
    how: str  # "normalised", "apart from lists" or "near (Jaccard 0.93)"

    @property
    def named(self) -> str:
        return f"{self.a_id}={self.b_id}" if self.a_id != self.b_id else self.a_id


def compared(case_id: str, row: Mapping[str, Any]) -> Compared:
    form = normalised(dict(row))
    rest = without_sets(form)
    loose = sha256_hex(canonical_json(rest)) if len(words(rest)) >= _MIN_WORDS else None
    return Compared(case_id, sha256_hex(canonical_json(form)), loose, frozenset(shingles(form)))


def _sketches(grams: Sequence[frozenset[str]]) -> list[MinHash]:
    """MinHashes of many shingle sets at once (datasketch's vectorised bulk path)."""
    if not grams:
        return []
    return MinHash.bulk([[g.encode("utf-8") for g in sorted(x)] for x in grams], num_perm=NUM_PERM)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if (a or b) else 1.0


def copies(
    a: Sequence[Compared], b: Sequence[Compared], threshold: float = THRESHOLD
) -> list[Copy]:
    """Each case of `b` that copies a case of `a`, with the first rule that finds it."""
    by_key = {c.key: c.case_id for c in reversed(a)}
    by_loose = {c.loose_key: c.case_id for c in reversed(a) if c.loose_key}
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
        elif c.grams:
            pending.append(c)
    for c, sketch in zip(pending, _sketches([c.grams for c in pending]), strict=True):
        scores = [(jaccard(a[i].grams, c.grams), i) for i in lsh.query(sketch)]
        score, i = max(scores, default=(0.0, -1))
        if score >= threshold:
            found.append(Copy(a[i].case_id, c.case_id, f"near (Jaccard {score:.2f})"))
    return found
