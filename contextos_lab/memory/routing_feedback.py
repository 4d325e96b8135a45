"""Seed 002's routing FeedbackStore: learned boosts per (normalised query, skill).

Each success adds `step` (the seed's DECAY_FACTOR, 0.1), each failure subtracts it; scores are
clamped to [MIN_SCORE, MAX_SCORE] = [-0.3, 0.3]. Every read decays the stored score by
TIME_DECAY_RATE (0.99, seed phase 40) and persists it, so advice nobody reinforces fades. The
store is JSON at `.memory/routing_feedback.json` (the seed's format) and survives restart.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path

DEFAULT_PATH = Path(".memory") / "routing_feedback.json"
#: Below this magnitude a decayed score is dropped (keeps the file from growing with dust).
_EPSILON = 1e-4
_DIGIT = re.compile(r"\d")  # any script's decimal digits (str patterns are Unicode-aware)


def _word_char(ch: str) -> bool:
    """Letters and combining marks of any script (a Devanagari vowel sign is part of its word)."""
    return unicodedata.category(ch)[0] in "LM"


def normalize_query(query: str) -> str:
    """NFKC + casefold, drop whitespace-separated tokens that contain a digit (order ids such
    as `O-12345` or `12345`), turn everything but letters and marks of any script into spaces,
    collapse whitespace: one key per phrasing, whatever order it names.

    `注文をキャンセル` and `返金してください` are different keys, `Rückerstattung` and
    `RÜCKERSTATTUNG` the same one (`Straße` = `STRASSE`). A query with no letters left (digits
    only, punctuation only) normalises to "", which the store never records or looks up.
    """
    text = unicodedata.normalize("NFKC", query).casefold()
    tokens = (t for t in text.split() if not _DIGIT.search(t))
    words = "".join(ch if _word_char(ch) else " " for ch in " ".join(tokens))
    return " ".join(words.split())


class RoutingFeedbackStore:
    """Maps (normalised query, skill_id) -> score; positive boosts routing, negative penalises."""

    MIN_SCORE = -0.3
    MAX_SCORE = 0.3
    DECAY_FACTOR = 0.1
    TIME_DECAY_RATE = 0.99

    def __init__(
        self,
        path: str | Path | None = DEFAULT_PATH,
        *,
        step: float = DECAY_FACTOR,
        clamp: float = MAX_SCORE,
        decay: float = TIME_DECAY_RATE,
    ) -> None:
        """`path=None` keeps the store in memory (used to replay a bundled history)."""
        if not 0.0 < clamp <= 1.0 or step < 0.0 or not 0.0 < decay <= 1.0:
            raise ValueError("need step >= 0, 0 < clamp <= 1 and 0 < decay <= 1")
        self.path = Path(path) if path is not None else None
        self.step = step
        self.min_score, self.max_score = -clamp, clamp
        self.decay = decay
        self._data: dict[str, dict[str, float]] | None = None

    def _load(self) -> dict[str, dict[str, float]]:
        """Lazy load: a missing file is an empty store; a corrupt one is an error, not data loss."""
        if self._data is None:
            if self.path is not None and self.path.exists():
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                # "" (every non-ASCII or digits-only query under the old normalisation) is a
                # shared key no query may reach; it is not loaded
                self._data = {q: {s: float(v) for s, v in d.items()} for q, d in raw.items() if q}
            else:
                self._data = {}
        return self._data

    def _save(self) -> None:
        """Atomic write (temp file + rename) so a crash never leaves half a JSON file."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".routing_feedback.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self._load(), fh, indent=2, sort_keys=True)
        os.replace(tmp, self.path)

    def record_feedback(self, query: str, skill_id: str, success: bool) -> float:
        """Add +step on success, -step on failure, clamp, persist; returns the new score.

        A query that normalises to "" (no letters) is ignored: nothing is stored, 0.0 returned.
        """
        key = normalize_query(query)
        if not key:
            return 0.0
        data = self._load()
        current = data.get(key, {}).get(skill_id, 0.0)
        delta = self.step if success else -self.step
        new = round(min(self.max_score, max(self.min_score, current + delta)), 10)
        data.setdefault(key, {})[skill_id] = new
        self._save()
        return new

    def get_boost(self, query: str, skill_id: str) -> float:
        """The learned boost, after this read's time decay (x0.99), which is persisted.
        0.0 for a query that normalises to "" (no letters): it has no key."""
        key = normalize_query(query)
        if not key:
            return 0.0
        data = self._load()
        skills = data.get(key)
        if not skills or skill_id not in skills:
            return 0.0
        decayed = skills[skill_id] * self.decay
        if abs(decayed) < _EPSILON:
            del skills[skill_id]
            if not skills:
                del data[key]
        else:
            skills[skill_id] = decayed
        self._save()
        return decayed

    def peek(self, query: str, skill_id: str) -> float:
        """The stored score without a read tick (for snapshots and inspection)."""
        key = normalize_query(query)
        return self._load().get(key, {}).get(skill_id, 0.0) if key else 0.0

    def snapshot(self) -> dict[str, dict[str, float]]:
        """A copy of every stored score; reading it does not decay anything."""
        return {q: dict(s) for q, s in self._load().items()}


def explain_boost(boost: float) -> str:
    """The router's reasoning fragment (seed 002, step 3)."""
    if boost > 0:
        return f"(Reinforced by past success +{boost:.2f})"
    if boost < 0:
        return f"(Penalised by past failure {boost:.2f})"
    return ""
